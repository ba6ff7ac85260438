"""Cluster access: the only client code that talks to Kafka (`admin`, over kafka-python) or ZooKeeper
(`zookeeper`, over kazoo), and the logins they need (`oauth`, `kerberos`)."""
