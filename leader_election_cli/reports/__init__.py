"""Reports: what a run found and did, each with its exit code and its JSON document."""
