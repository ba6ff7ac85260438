"""Rendering: reports as Kafka's text lines, rich tables, JSON documents and record files."""
