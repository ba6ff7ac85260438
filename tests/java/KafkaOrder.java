// The orders in which Kafka's LeaderElectionCommand prints partitions, with Kafka's own code
// (TopicPartition's hashCode, Java's HashSet and HashMap); tests compare ours with it (conftest.kafka_order).
// `duplicates`: an election file's duplicates (Collectors.toSet(), Set.toString()); input: one case per line,
// entries "topic partition" separated by tabs; output: the set, one per line.
// `results`: the result lines: electLeaders copies the admin client's answer (ElectLeadersResponse
// .electLeadersResult: a HashMap filled in the response's order) into a HashSet of the elected, a HashSet of
// the already elected and a HashMap of the failed, and prints each in its order; input: one case per line,
// entries "topic partition outcome" (E elected, N not needed, F failed) separated by tabs; output: one line
// per case, the three lists (", "-joined) separated by " | ".
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.stream.Collectors;

public class KafkaOrder {
    static final class TopicPartition {
        final String topic;
        final int partition;

        TopicPartition(String topic, int partition) {
            this.topic = topic;
            this.partition = partition;
        }

        @Override
        public int hashCode() {  // org.apache.kafka.common.TopicPartition.hashCode
            final int prime = 31;
            int result = prime + partition;
            result = prime * result + Objects.hashCode(topic);
            return result;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof TopicPartition && ((TopicPartition) other).partition == partition
                && ((TopicPartition) other).topic.equals(topic);
        }

        @Override
        public String toString() {
            return topic + "-" + partition;
        }
    }

    static String duplicates(String line) {
        List<TopicPartition> partitions = new ArrayList<>();
        for (String entry : line.isEmpty() ? new String[0] : line.split("\t")) {
            int space = entry.lastIndexOf(' ');
            partitions.add(new TopicPartition(entry.substring(0, space), Integer.parseInt(entry.substring(space + 1))));
        }
        Set<TopicPartition> duplicatePartitions = partitions.stream()
            .filter(i -> Collections.frequency(partitions, i) > 1)
            .collect(Collectors.toSet());
        return duplicatePartitions.toString();
    }

    static String results(String line) {
        Map<TopicPartition, String> electionResults = new HashMap<>();
        for (String entry : line.split("\t")) {
            String[] parts = entry.split(" ");
            electionResults.put(new TopicPartition(parts[0], Integer.parseInt(parts[1])), parts[2]);
        }
        Set<TopicPartition> succeeded = new HashSet<>();
        Set<TopicPartition> noop = new HashSet<>();
        Map<TopicPartition, String> failed = new HashMap<>();
        electionResults.forEach((key, outcome) -> {
            if (outcome.equals("N")) {
                noop.add(key);
            } else if (outcome.equals("F")) {
                failed.put(key, outcome);
            } else {
                succeeded.add(key);
            }
        });
        List<String> lists = new ArrayList<>();
        lists.add(succeeded.stream().map(TopicPartition::toString).collect(Collectors.joining(", ")));
        lists.add(noop.stream().map(TopicPartition::toString).collect(Collectors.joining(", ")));
        List<String> failures = new ArrayList<>();
        failed.forEach((key, value) -> failures.add(key.toString()));
        lists.add(String.join(", ", failures));
        return String.join(" | ", lists);
    }

    public static void main(String[] args) {
        boolean duplicates = args[0].equals("duplicates");
        Scanner in = new Scanner(System.in, StandardCharsets.UTF_8);
        while (in.hasNextLine()) {
            String line = in.nextLine();
            System.out.println(duplicates ? duplicates(line) : results(line));
        }
    }
}
