"""Thin click commands: parse, call the library, render, exit."""
