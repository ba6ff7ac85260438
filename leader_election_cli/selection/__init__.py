"""Selection: flags and files -> validated partitions, with Kafka's rules and messages."""
