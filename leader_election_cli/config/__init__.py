"""The admin client's configuration: the Java `.properties` file, its JAAS entry, TLS stores and logins,
and the settings they make."""
