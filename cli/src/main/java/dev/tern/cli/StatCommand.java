package dev.tern.cli;

import dev.tern.core.counters.CountersFile;
import dev.tern.core.counters.CountersSnapshot;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code tern stat [--all] [--watch SECONDS] [--dir DIR]}: the live counters of every running stack, read from the
 * counters files the stacks publish (without disturbing them). Zero counters are hidden unless {@code --all}.
 */
final class StatCommand {
    static final String USAGE = "stat [--all] [--watch SECONDS] [--dir DIR]";
    static final CommandHelp HELP = new CommandHelp("stat", "[--all] [--watch SECONDS] [--dir DIR]",
        "live counters of running stacks (and of programs under tern exec)",
        "Prints the counters every running Tern stack publishes, read from their counters files without disturbing "
            + "them. Zero counters are hidden unless --all.",
        java.util.List.of(
            CommandHelp.option("--all", "show zero counters too", "hide them"),
            CommandHelp.option("--watch SECONDS", "print again every SECONDS until interrupted", "print once"),
            CommandHelp.option("--dir DIR", "read the counters files in DIR", "$TERN_COUNTERS_DIR when set, else every "
                + "user's directory under " + dev.tern.core.counters.CountersFile.defaultBase())),
        false, java.util.List.of("./tern stat", "./tern stat --all --watch 1"));

    private final PrintStream out;

    StatCommand(PrintStream out) {
        this.out = out;
    }

    int run(String[] argv) throws IOException, InterruptedException {
        final Arguments args = Arguments.parse("stat", argv, Set.of("--watch", "--dir"), Set.of("--all"));
        args.operands(0, 0, USAGE);
        final List<Path> directories = args.has("--dir") ? List.of(Path.of(args.value("--dir", null)))
            : CountersFile.defaultReadDirectories();
        final boolean all = args.has("--all");
        final double watch = args.doubleValue("--watch", 0, 0, 3600);
        while (true) {
            print(directories, args.has("--dir") ? directories.getFirst().toString()
                : CountersFile.configuredDirectory() != null ? CountersFile.configuredDirectory().toString()
                : CountersFile.defaultBase().resolve("tern-*").toString(), all);
            if (watch == 0) {
                return 0;
            }
            Thread.sleep((long) (watch * 1000));
            out.println();
        }
    }

    /** A shard's counters-file name: {@code NAME[K/N]} (StackShards.shardName). */
    private static final java.util.regex.Pattern SHARD = java.util.regex.Pattern.compile("^(.*)\\[(\\d+)/(\\d+)]$");

    /**
     * After the shards of a sharded stack (files named {@code NAME[K/N]} of one process), their totals: each counter
     * summed over the shards, as {@code stack NAME (pid P, N shards, totals)}. Levels (a link's buffers in use, memory
     * in use) add up too, which is what a stack of N shards holds.
     */
    private void printShardTotals(List<CountersSnapshot> running, boolean all) {
        final Map<String, List<CountersSnapshot>> groups = new java.util.LinkedHashMap<>();
        for (CountersSnapshot snapshot : running) {
            final java.util.regex.Matcher shard = SHARD.matcher(snapshot.name());
            if (shard.matches()) {
                groups.computeIfAbsent(snapshot.pid() + " " + shard.group(1), key -> new ArrayList<>()).add(snapshot);
            }
        }
        for (List<CountersSnapshot> shards : groups.values()) {
            final java.util.regex.Matcher first = SHARD.matcher(shards.getFirst().name());
            first.matches();
            final Map<String, Long> totals = new java.util.LinkedHashMap<>();
            for (CountersSnapshot snapshot : shards) {
                snapshot.counters().forEach((label, value) -> totals.merge(label, value, Long::sum));
            }
            out.printf("stack %s (pid %d, %d of %s shards, totals)%n", first.group(1), shards.getFirst().pid(),
                shards.size(), first.group(3));
            final int width = totals.keySet().stream().mapToInt(String::length).max().orElse(10);
            for (Map.Entry<String, Long> counter : totals.entrySet()) {
                if (all || counter.getValue() != 0) {
                    out.printf("  %-" + width + "s %,d%n", counter.getKey(), counter.getValue());
                }
            }
        }
    }

    private void print(List<Path> directories, String where, boolean all) {
        final List<CountersSnapshot> snapshots = new ArrayList<>();
        final List<String> unreadable = new ArrayList<>();
        for (Path directory : directories) {
            try {
                snapshots.addAll(CountersSnapshot.readAll(directory));
            } catch (IOException e) {
                unreadable.add(directory.toString()); // another user's directory: their stacks are theirs to see
            }
        }
        final long stale = snapshots.stream().filter(s -> !s.alive()).count();
        final List<CountersSnapshot> running = snapshots.stream().filter(CountersSnapshot::alive).toList();
        if (running.isEmpty()) {
            out.println("tern stat: no running stacks (counters directory " + where + ")");
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
        printShardTotals(running, all);
        if (stale > 0) {
            out.println("(" + stale + " counters file(s) of exited processes skipped)");
        }
        if (!unreadable.isEmpty()) {
            out.println("(not readable, skipped: " + String.join(", ", unreadable) + ")");
        }
    }
}
