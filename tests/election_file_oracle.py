"""An oracle for Kafka's election file written without the project's code, for fuzzing.

Used by tests/test_fuzz_input.py and benchmarks/fuzz_campaign.py to tell a bad file from a good one.
"""

from __future__ import annotations

import json
import re

LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")


def is_valid_election_file(data: bytes) -> bool:
    """An independent oracle for Kafka's election file: strict JSON, {"partitions": [...]}, legal topic
    names, partition ids 0..2^31-1 as JSON integers, no partition twice."""
    def no_constants(name: str) -> None:
        raise ValueError(name)

    try:
        document = json.loads(data.decode("utf-8").removeprefix("\ufeff"), parse_constant=no_constants)
    except (ValueError, RecursionError):
        return False
    if not isinstance(document, dict) or not isinstance(document.get("partitions"), list):
        return False
    seen = set()
    for entry in document["partitions"]:
        if not isinstance(entry, dict):
            return False
        topic, partition = entry.get("topic"), entry.get("partition")
        if type(topic) is not str or not LEGAL_TOPIC.fullmatch(topic) or topic in (".", ".."):
            return False
        if type(partition) is not int or not 0 <= partition < 2**31 or (topic, partition) in seen:
            return False
        seen.add((topic, partition))
    return True
