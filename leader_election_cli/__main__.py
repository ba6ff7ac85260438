"""`python -m leader_election_cli` runs the drop-in `kafka-leader-election` command."""

from leader_election_cli.cli.drop_in import main

if __name__ == "__main__":
    main()
