package dev.tern.cli;

import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.nio.TernSelectorProvider;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * {@code tern exec [link flags] [--rules FILE] [--name NAME] [--idle backoff|spin] [--shards N] -- COMMAND...}: runs an unmodified
 * JVM program on a Tern stack. COMMAND is {@code java ...} or anything that starts a JDK 25 JVM. A {@code java}
 * launcher or a JDK tool gets Tern's agent ({@code dev.tern.nio.agent.TernAgent}) on its command line; anything else
 * inherits it in {@code JAVA_TOOL_OPTIONS} ({@link ProgramLauncher}). The agent makes Tern's {@code SelectorProvider}
 * the JVM's before the program starts. The link is opened and closed once before the program starts, so that a missing interface or privilege is one line
 * from this command (exit 1). The program's NIO channels then go through Tern or,
 * by the rules, the kernel; its stack publishes counters under the program's name ({@code tern stat}). With
 * {@code --shards N} (one per core by default on AF_PACKET, as {@code tern serve}) the stack is N shards sharing the
 * address, a thread each: server channels listen on every shard, active opens go to the shards in turn.
 *
 * <p>Exit status: the program's; 2 for a bad command line or rules file (one line, before anything starts).
 */
final class ExecCommand {
    static final String USAGE = "exec [--rules FILE] [--name NAME] [--idle backoff|spin] [--shards N] [--release-idle MS] "
        + "[--shutdown-linger S] [--max-connections N] [--buffer-size B] [--memory-limit BYTES] [--ecn MODE] "
        + NetworkOptions.USAGE
        + " -- COMMAND...";
    static final CommandHelp HELP = new CommandHelp("exec", "[--rules FILE] [--name NAME] [--idle backoff|spin] "
        + "[--shards N] [--release-idle MS] [--shutdown-linger S] [--max-connections N] [--buffer-size B] [--memory-limit BYTES] [--ecn MODE] [link flags] "
        + "-- COMMAND...", "run an unmodified JVM program on Tern (NIO through Tern's provider)",
        "Runs COMMAND (java ... or anything that starts a JDK 25 JVM) with Tern's NIO provider installed by an "
            + "agent, so its channels and classic sockets go through a Tern stack or, by the rules, the kernel. "
            + "Exits with the program's status; 2 for a bad command line or rules file.",
        List.of(
            CommandHelp.option("--rules FILE", "which addresses and ports go to the kernel instead (docs/NIO.md)",
                "everything on Tern"),
            CommandHelp.option("--name NAME", "the stack's name in ./tern stat", "the program's main class or jar"),
            CommandHelp.option("--idle backoff|spin", "how the stack's thread waits for work", "backoff"),
            CommandHelp.option("--shards N", "N stacks sharing the address, a thread each; the link steers each flow to "
                + "one (afpacket, rawqp and memory links)", "one per core on afpacket, else 1"),
            CommandHelp.option("--release-idle MS", "a connection on a selector unused this long gives its buffers back "
                + "until data comes or it writes; 0: never", "1000"),
            CommandHelp.option("--shutdown-linger S", "when the program ends, close each connection with a FIN after "
                + "the data written (those it closed itself still finish theirs) and wait up to S seconds for them to "
                + "end, then reset what is left; 0: reset every connection at once; 0.." + StopOnSignal.MAX_LINGER_SECONDS,
                "0"),
            NetworkOptions.MAX_CONNECTIONS_HELP,
            CommandHelp.option("--buffer-size B", "send and receive buffer of every connection, in bytes: a power of "
                + "two, " + dev.tern.tcp.TcpConfig.MIN_BUFFER + ".." + dev.tern.tcp.TcpConfig.MAX_BUFFER
                + " (SO_SNDBUF and SO_RCVBUF set by the program still win)", "131072"),
            NetworkOptions.MEMORY_LIMIT_HELP,
            NetworkOptions.ECN_HELP),
        true, List.of("./tern exec --link memory -- java -cp app.jar Main"));

    private final PrintStream err;

    ExecCommand(PrintStream err) {
        this.err = err;
    }

    int run(String[] argv) throws IOException, InterruptedException {
        if (!List.of(argv).contains("--")) {
            throw new UsageException("exec: put the program after --, e.g. tern exec --link memory -- java -cp app.jar Main");
        }
        final Set<String> valueFlags = new HashSet<>(NetworkOptions.VALUE_FLAGS);
        valueFlags.addAll(Set.of("--rules", "--name", "--idle", "--shards", "--release-idle", "--shutdown-linger", "--max-connections",
            "--buffer-size", "--memory-limit", "--ecn"));
        final Arguments args = Arguments.parse("exec", argv, valueFlags, Set.of());
        final List<String> command = args.operands();
        if (command.isEmpty()) {
            throw new UsageException("exec: missing the program after --; usage: tern " + USAGE);
        }
        final NetworkOptions network = NetworkOptions.from(args);
        final Properties config = new Properties();
        config.setProperty("tern.link", network.linkSpec());
        config.setProperty("tern.ip", network.address.toString());
        if (network.ipv6()) {
            final List<String> ip6 = new java.util.ArrayList<>(network.ipv6Addresses.stream().map(Object::toString).toList());
            if (network.slaac) {
                ip6.add("auto");
            }
            config.setProperty("tern.ip6", String.join(",", ip6));
        }
        if (network.gateway() != 0) {
            config.setProperty("tern.gw", Ipv4Address.format(network.gateway()));
        }
        if (network.mac != -1) {
            config.setProperty("tern.mac", MacAddress.format(network.mac));
        }
        config.setProperty("tern.mtu", Integer.toString(network.mtu));
        if (network.pcap != null) {
            config.setProperty("tern.pcap", network.pcap.toAbsolutePath().toString());
        }
        if (args.has("--rules")) {
            config.setProperty("tern.rules", Path.of(args.value("--rules", null)).toAbsolutePath().toString());
        }
        if (args.has("--name")) {
            config.setProperty("tern.name", args.value("--name", null));
        }
        if (args.has("--idle")) {
            config.setProperty("tern.idle", args.value("--idle", null));
        }
        if (args.has("--release-idle")) {
            config.setProperty("tern.releaseIdleMs", Integer.toString(args.intValue("--release-idle", 0, 0,
                (int) TernSelectorProvider.MAX_IDLE_RELEASE_MS)));
        }
        if (args.has("--shutdown-linger")) {
            config.setProperty("tern.shutdownLinger", Long.toString(StopOnSignal.lingerNs(args) / 1_000_000_000L));
        }
        final dev.tern.tcp.EcnMode ecn = NetworkOptions.ecn("exec", args);
        if (ecn != null) {
            config.setProperty("tern.ecn", ecn.name().toLowerCase(java.util.Locale.ROOT));
        }
        final int maxConnections = NetworkOptions.maxConnections(args);
        if (maxConnections > 0) {
            config.setProperty("tern.maxConnections", Integer.toString(maxConnections));
        }
        final int bufferSize = NetworkOptions.bufferSize("exec", args);
        if (bufferSize > 0) {
            config.setProperty("tern.bufferSize", Integer.toString(bufferSize));
        }
        final long memoryLimit = NetworkOptions.memoryLimit("exec", args);
        if (memoryLimit > 0) {
            config.setProperty("tern.memoryLimit", Long.toString(memoryLimit));
        }
        final int shards = network.shards("exec", args);
        config.setProperty("tern.shards", Integer.toString(shards));
        try {
            TernSelectorProvider.checkConfiguration(config);
        } catch (IllegalArgumentException e) {
            throw new UsageException("exec: " + e.getMessage());
        }
        final ProgramLauncher program = ProgramLauncher.of(command, err);
        network.checkLinkOpens();
        final List<String> jars = ternJars();
        config.setProperty("tern.classpath", String.join(File.pathSeparator, jars));
        final Path file = Files.createTempFile("tern-exec", ".properties");
        // A SIGTERM or Ctrl-C ends this JVM through its shutdown hooks without the finally below: the file goes then.
        file.toFile().deleteOnExit();
        try {
            try (OutputStream out = Files.newOutputStream(file)) {
                config.store(out, "tern exec: read by dev.tern.nio.agent.TernAgent at JVM start");
            }
            final List<String> ternOptions = ternOptions(agentJar(jars), file);
            final ProcessBuilder builder = new ProcessBuilder(program.command(ternOptions)).inheritIO();
            if (program.needsToolOptions()) {
                // A script ending in a JVM: only the variable reaches the JVM it starts.
                final String inherited = System.getenv().getOrDefault("JAVA_TOOL_OPTIONS", "");
                builder.environment().put("JAVA_TOOL_OPTIONS", (inherited + " " + javaToolOptions(ternOptions)).strip());
            }
            final Process process;
            try {
                process = builder.start();
            } catch (IOException e) {
                throw new CommandFailure("exec: cannot start " + command.getFirst() + ": " + e.getMessage(), e);
            }
            final Thread stopChild = new Thread(() -> process.destroy(), "tern-exec-stop");
            Runtime.getRuntime().addShutdownHook(stopChild);
            final int status = process.waitFor();
            Runtime.getRuntime().removeShutdownHook(stopChild);
            return status;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * The flags every Tern JVM needs (docs/JAVA.md), and the agent with its configuration file, one option each. Paths
     * with spaces are refused, since JAVA_TOOL_OPTIONS ({@link #javaToolOptions}) is split on them.
     */
    static List<String> ternOptions(String agentJar, Path config) {
        if (agentJar.contains(" ") || config.toString().contains(" ")) {
            throw new CommandFailure("exec: JAVA_TOOL_OPTIONS cannot carry paths with spaces: " + agentJar + ", " + config);
        }
        return List.of("-javaagent:" + agentJar + "=" + config, "--enable-native-access=ALL-UNNAMED",
            "--sun-misc-unsafe-memory-access=allow");
    }

    /** {@code options} as JAVA_TOOL_OPTIONS carries them. */
    static String javaToolOptions(List<String> options) {
        return String.join(" ", options);
    }

    /** Tern's jars and those its provider needs at run time, from this JVM's class path. */
    static List<String> ternJars() {
        final List<String> jars = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
            final String name = Path.of(entry).getFileName() == null ? "" : Path.of(entry).getFileName().toString();
            if (name.endsWith(".jar") && !name.startsWith("tern-cli") && (name.startsWith("tern-")
                || name.startsWith("agrona-") || name.startsWith("pcap4j-") || name.startsWith("jna-")
                || name.startsWith("slf4j-"))) {
                jars.add(Path.of(entry).toAbsolutePath().toString());
            }
        }
        return jars;
    }

    /** The jar holding Tern's provider and agent (tern-nio). */
    static String agentJar(List<String> jars) {
        final Path location;
        try {
            location = Path.of(TernSelectorProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        if (!location.toString().endsWith(".jar")) {
            throw new CommandFailure("exec: Tern's provider was loaded from " + location + ", not a jar; build the jars "
                + "first (./tern does, or mvn -DskipTests package)");
        }
        return location.toAbsolutePath().toString();
    }
}
