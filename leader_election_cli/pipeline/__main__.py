"""Run `kafka-leaders analyze` as a Spark application (see docs/SPARK.md):

    spark-submit --master yarn --py-files leader_election_cli.zip \
        leader_election_cli/pipeline/__main__.py 'hdfs:///snapshots/*.parquet' --out hdfs:///leadership
"""

from leader_election_cli.cli.analyze_command import analyze

if __name__ == "__main__":
    analyze(prog_name="analyze")
