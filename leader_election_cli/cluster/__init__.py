"""Cluster access: the only client code that talks to Kafka (`admin`, kafka-python) or ZooKeeper (`zookeeper`, kazoo)."""
