// Kafka's LeaderElectionCommand lists an election file's duplicates with this code (TopicPartition's
// hashCode, Collectors.toSet(), Set.toString()); tests/test_selection_file.py compares our order with it.
// Input: one case per line, entries "topic partition" separated by tabs; output: the set, one per line.
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.stream.Collectors;

public class DuplicateOrder {
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

    public static void main(String[] args) {
        Scanner in = new Scanner(System.in, StandardCharsets.UTF_8);
        while (in.hasNextLine()) {
            String line = in.nextLine();
            List<TopicPartition> partitions = new ArrayList<>();
            for (String entry : line.isEmpty() ? new String[0] : line.split("\t")) {
                int space = entry.lastIndexOf(' ');
                partitions.add(new TopicPartition(entry.substring(0, space), Integer.parseInt(entry.substring(space + 1))));
            }
            Set<TopicPartition> duplicatePartitions = partitions.stream()
                .filter(i -> Collections.frequency(partitions, i) > 1)
                .collect(Collectors.toSet());
            System.out.println(duplicatePartitions.toString());
        }
    }
}
