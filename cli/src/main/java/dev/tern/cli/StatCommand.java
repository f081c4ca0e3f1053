package dev.tern.cli;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.counters.CountersSnapshot;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code tern stat [--all] [--watch SECONDS] [--dir DIR]}: the live counters of every running stack, read from the
 * counters files the stacks publish (without disturbing them). Zero counters are hidden unless {@code --all}.
 */
final class StatCommand {
    static final String USAGE = "stat [--all] [--watch SECONDS] [--dir DIR]";

    private final PrintStream out;

    StatCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) throws IOException, InterruptedException {
        final Arguments args = Arguments.parse("stat", argv, Set.of("--watch", "--dir"), Set.of("--all"));
        args.operands(0, 0, USAGE);
        final Path directory = args.has("--dir") ? Path.of(args.value("--dir", null)) : CountersFile.defaultDirectory();
        final boolean all = args.has("--all");
        final double watch = args.doubleValue("--watch", 0, 0, 3600);
        while (true) {
            print(directory, all);
            if (watch == 0) {
                return 0;
            }
            Thread.sleep((long) (watch * 1000));
            out.println();
        }
    }

    private void print(Path directory, boolean all) throws IOException {
        final List<CountersSnapshot> snapshots = CountersSnapshot.readAll(directory);
        final long stale = snapshots.stream().filter(s -> !s.alive()).count();
        final List<CountersSnapshot> running = snapshots.stream().filter(CountersSnapshot::alive).toList();
        if (running.isEmpty()) {
            out.println("tern stat: no running stacks (counters directory " + directory + ")");
        }
        for (CountersSnapshot snapshot : running) {
            out.printf("stack %s (pid %d, %s)%n", snapshot.name(), snapshot.pid(), snapshot.file());
            final int width = snapshot.counters().keySet().stream().mapToInt(String::length).max().orElse(10);
            for (Map.Entry<String, Long> counter : snapshot.counters().entrySet()) {
                if (all || counter.getValue() != 0) {
                    out.printf("  %-" + width + "s %,d%n", counter.getKey(), counter.getValue());
                }
            }
        }
        if (stale > 0) {
            out.println("(" + stale + " counters file(s) of exited processes skipped)");
        }
    }
}
