// The orders in which Kafka's LeaderElectionCommand prints partitions, with Kafka's own code
// (TopicPartition's hashCode, Java's HashSet and HashMap); tests compare ours with it (conftest.kafka_order).
// `duplicates`: an election file's duplicates (Collectors.toSet(), Set.toString()); input: one case per line,
// entries "topic partition" separated by tabs; output: the set, one per line.
// `results`: the result lines: electLeaders copies the admin client's answer (ElectLeadersResponse
// .electLeadersResult: a HashMap filled in the response's order) into a HashSet of the elected, a HashSet of
// the already elected and a HashMap of the failed, and prints each in its order; input: one case per line,
// entries "topic partition outcome" (E elected, N not needed, F failed) separated by tabs; output: one line
// per case, the three lists (", "-joined) separated by " | ".
// `selection`: as `results`, but the entries are the selected partitions (an election file's, in its order):
// the tool makes a HashSet of them, its admin client a request grouped by topic in the set's order
// (ElectLeadersRequest.Builder), and a KRaft controller answers in the request's order.
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

    static String selection(String line) {
        List<TopicPartition> partitions = new ArrayList<>();
        Map<TopicPartition, String> outcomes = new HashMap<>();
        for (String entry : line.split("\t")) {
            String[] parts = entry.split(" ");
            TopicPartition tp = new TopicPartition(parts[0], Integer.parseInt(parts[1]));
            partitions.add(tp);
            outcomes.put(tp, parts[2]);
        }
        Map<String, List<TopicPartition>> request = new LinkedHashMap<>();
        new HashSet<>(partitions).forEach(tp -> request.computeIfAbsent(tp.topic, topic -> new ArrayList<>()).add(tp));
        List<String> response = new ArrayList<>();
        request.values().forEach(topic -> topic.forEach(tp -> response.add(tp.topic + " " + tp.partition + " " + outcomes.get(tp))));
        return results(String.join("\t", response));
    }

    public static void main(String[] args) {
        boolean duplicates = args[0].equals("duplicates");
        Scanner in = new Scanner(System.in, StandardCharsets.UTF_8);
        while (in.hasNextLine()) {
            String line = in.nextLine();
            System.out.println(duplicates ? duplicates(line) : args[0].equals("selection") ? selection(line) : results(line));
        }
    }
}
