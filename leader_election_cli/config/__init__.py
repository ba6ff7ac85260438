"""The admin client's configuration: the Java `.properties` file, its JAAS entry, TLS stores, and the settings they make."""
