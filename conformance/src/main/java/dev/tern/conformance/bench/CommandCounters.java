package dev.tern.conformance.bench;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.counters.CountersSnapshot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The counters of the {@code tern} commands a benchmark starts ({@code tern serve}, {@code tern nc}): they publish
 * into a directory of the benchmark's own ({@code TERN_COUNTERS_DIR}), read while the command runs, as
 * {@code tern stat} reads them; a sharded stack's counters are summed over its shards. Deleted on {@link #close()}.
 * Cold path.
 */
final class CommandCounters implements AutoCloseable {
    private final Path directory;

    private CommandCounters(Path directory) {
        this.directory = directory;
    }

    static CommandCounters create() {
        try {
            return new CommandCounters(Files.createTempDirectory("tern-bench-counters"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code command} run with this directory as its counters directory. */
    String[] command(String... command) {
        final List<String> full = new ArrayList<>(List.of("env", CountersFile.DIRECTORY_VARIABLE + "=" + directory));
        full.addAll(List.of(command));
        return full.toArray(String[]::new);
    }

    /** Every running stack's counters, summed by label (empty before a stack published any). */
    Map<String, Long> read() {
        final Map<String, Long> totals = new LinkedHashMap<>();
        try {
            for (CountersSnapshot snapshot : CountersSnapshot.readAll(directory)) {
                if (snapshot.alive()) {
                    snapshot.counters().forEach((label, value) -> totals.merge(label, value, Long::sum));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return totals;
    }

    /** How much each counter whose label starts with one of {@code prefixes} grew from {@code before} to {@code after}. */
    static Map<String, Long> growth(Map<String, Long> before, Map<String, Long> after, List<String> prefixes) {
        final Map<String, Long> grown = new LinkedHashMap<>();
        after.forEach((label, value) -> {
            if (prefixes.stream().anyMatch(label::startsWith)) {
                grown.put(label, value - before.getOrDefault(label, 0L));
            }
        });
        return grown;
    }

    @Override
    public void close() {
        VethBenchmark.deleteTree(directory);
    }
}
