package dev.tern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static dev.tern.cli.TernCommandLineTest.tern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The manners every command keeps: help on request, one line in words for an error, exit statuses as documented
 * (docs/COMMANDS.md), {@code nc -w}, and a counters directory every user can use.
 */
class CommandMannersTest {
    private static final String JAVA = ProcessHandle.current().info().command().orElse("java");
    /** An exception's class name as Java prints it: {@code java.io.UncheckedIOException}, {@code FooException}. */
    private static final String CLASS_NAME = ".*(\\b[a-z]+\\.[a-z.]+\\.[A-Z]\\w+|Exception|Error\\b|\\tat ).*";

    static Stream<String> commands() {
        return Tern.COMMANDS.stream().map(CommandHelp::name);
    }

    @ParameterizedTest(name = "tern {0} --help")
    @MethodSource("commands")
    void everyCommandsHelpShowsUsageDefaultsAndAnExampleInAHundredColumns(String command) {
        final TernCommandLineTest.Run run = tern(command, "--help");
        assertEquals(0, run.status(), run.err());
        assertEquals("", run.err());
        final String help = run.out();
        assertTrue(help.startsWith("usage: ./tern " + command), help);
        assertTrue(help.contains("\nexample:\n  ./tern ") || help.contains("\nexamples:\n  ./tern ")
            || help.contains("\nexample:\n  echo ") || help.contains("\nexamples:\n  echo "), help);
        assertTrue(help.lines().allMatch(line -> line.length() <= CommandHelp.WIDTH),
            "a line over " + CommandHelp.WIDTH + " columns:\n" + help);
        final CommandHelp spec = Tern.COMMANDS.stream().filter(c -> c.name().equals(command)).findFirst().orElseThrow();
        for (CommandHelp.Option option : spec.options()) {
            assertTrue(help.contains(option.flag()), option.flag() + " missing from\n" + help);
            assertTrue(option.defaultValue() != null, option.flag() + " gives no default");
        }
        if (spec.linkFlags()) {
            assertTrue(help.contains("--link KIND") && help.contains("(default: memory)"), help);
        }
    }

    /** rawqp has never run on RDMA hardware: wherever a user meets it, the command line says so. */
    @Test
    void theRawQpLinkSaysItHasNeverRunOnHardwareWhereverAUserMeetsIt() {
        final TernCommandLineTest.Run devices = tern("devices");
        assertEquals(0, devices.status(), devices.err());
        assertTrue(devices.out().contains(DevicesCommand.NEVER_RUN), devices.out());
        assertTrue(tern("devices", "--help").out().replaceAll("\\s+", " ").contains("never yet run on RDMA hardware"));
        assertTrue(tern("ping", "--help").out().replaceAll("\\s+", " ").contains("never yet run on RDMA hardware"));
    }

    @ParameterizedTest(name = "tern help {0} = tern {0} --help = tern {0} -h")
    @MethodSource("commands")
    void helpCommandEqualsCommandDashDashHelpAndDashH(String command) {
        final String help = tern(command, "--help").out();
        assertEquals(help, tern("help", command).out());
        assertEquals(help, tern(command, "-h").out());
        assertEquals(0, tern("help", command).status());
    }

    @Test
    void helpAfterOtherFlagsStillHelpsButNotAfterDoubleDash() {
        assertEquals(tern("nc", "--help").out(), tern("nc", "-u", "198.18.0.1", "7", "--help").out());
        final TernCommandLineTest.Run exec = tern("exec", "--link", "nosuch", "--", "java", "--help");
        assertEquals(2, exec.status(), "--help after -- belongs to the program: " + exec.out());
    }

    @ParameterizedTest(name = "tern {0}")
    @ValueSource(strings = {"--help", "-h", "help"})
    void ternHelpListsEveryCommandOnOneLineEach(String flag) {
        final TernCommandLineTest.Run run = tern(flag);
        assertEquals(0, run.status());
        for (CommandHelp command : Tern.COMMANDS) {
            assertEquals(1, run.out().lines().filter(l -> l.startsWith("  " + command.name() + " ")).count(),
                command.name() + " in\n" + run.out());
        }
        assertTrue(run.out().lines().allMatch(line -> line.length() <= CommandHelp.WIDTH), run.out());
    }

    @Test
    void helpForAnUnknownCommandIsABadCommandLine() {
        final TernCommandLineTest.Run run = tern("help", "frob");
        assertEquals(2, run.status());
        assertEquals("tern: help: unknown command 'frob' (./tern help lists them)", run.err().strip());
    }

    @ParameterizedTest(name = "tern {0}")
    @ValueSource(strings = {"nc --frob 198.18.0.1 7", "ping --frob 198.18.0.1", "serve --frob", "stat --frob",
        "demo --frob", "bench --frob", "plot --frob", "script --frob x.pkt", "script --profile nope x.pkt", "script", "devices --frob", "exec --frob -- java",
        "nc 198.18.0.300 7", "nc 198.18.0.1 99999", "ping 1.2.3", "nc --join 10.0.0.1 -u -l 5000",
        "ping --gw 10.0.0.1 198.18.0.1", "serve --echo x"})
    void aBadFlagOrAddressGetsOneLineInWordsAndStatus2(String line) {
        final TernCommandLineTest.Run run = tern(line.split(" "));
        assertEquals(2, run.status(), run.err());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().startsWith("tern: "), run.err());
        assertFalse(run.err().strip().matches(CLASS_NAME), "an exception's name: " + run.err());
    }

    @ParameterizedTest(name = "tern {0}")
    @ValueSource(strings = {"nc --tcp-trace /nonexistent/dir/t.csv 198.18.0.1 7",
        "ping -c 1 --pcap /nonexistent/dir/p.pcap 198.18.0.1", "plot /nonexistent/t.csv -o /tmp/t.svg",
        "script /nonexistent/dir/t.pkt",
        "exec --rules /nonexistent/dir/rules -- java -version"})
    void aFileThatCannotBeOpenedGetsOneLineInWords(String line) {
        final TernCommandLineTest.Run run = tern(line.split(" "));
        // ping exits 2 on an error (ping(8)); exec 2 for a bad rules file; the others 1
        assertEquals(line.startsWith("ping") || line.startsWith("exec") ? 2 : 1, run.status(), run.err());
        assertEquals(1, run.err().lines().count(), run.err());
        assertTrue(run.err().contains("/nonexistent/"), run.err());
        assertTrue(run.err().contains("no such file or directory")
            || run.err().toLowerCase(java.util.Locale.ROOT).contains("no such file"), run.err());
        assertFalse(run.err().strip().matches(CLASS_NAME), "an exception's name: " + run.err());
    }

    @Test
    void describeNeverShowsAnExceptionsClassName() {
        assertEquals("/x/y: no such file or directory",
            Tern.describe(new java.io.UncheckedIOException(new java.nio.file.NoSuchFileException("/x/y"))));
        assertEquals("boom", Tern.describe(new IllegalStateException(new java.io.IOException("boom"))));
        assertEquals("cannot open: disk on fire", Tern.describe(new RuntimeException("cannot open: "
            + new java.io.IOException("disk on fire"))));
        assertFalse(Tern.describe(new NullPointerException()).matches(CLASS_NAME));
    }

    @Test
    void pingExitsLikePing8Status2ForAnErrorOnStderr() {
        final TernCommandLineTest.Run noRoute = tern("ping", "-c", "1", "10.1.1.1");
        assertEquals(2, noRoute.status());
        assertEquals("ping: connect: Network is unreachable", noRoute.err().strip());
        assertFalse(noRoute.out().contains("unreachable"), noRoute.out());
        final TernCommandLineTest.Run noLink = tern("ping", "-c", "1", "--link", "rawqp:mlx5_0", "198.18.0.1");
        assertEquals(2, noLink.status());
        assertEquals(1, noLink.err().lines().count(), noLink.err());
        assertEquals(0, tern("ping", "-c", "1", "198.18.0.1").status());
        assertEquals(1, tern("ping", "-c", "1", "-W", "0.2", "198.18.0.77").status());
    }

    /**
     * {@code java ... dev.tern.cli.Tern ARGS} in its own JVM, with this JVM's class path. Where this test runs with
     * SIGINT ignored (a script that started {@code ./tern test} with {@code &}: POSIX shells start background commands
     * so, and the ignoring is inherited across exec), the child gets the default action back through perl (Debian's
     * perl-base is essential), since a JVM started with SIGINT ignored keeps it ignored, as it should, and Ctrl-C
     * could not be tested.
     */
    private static ProcessBuilder ternProcess(Path counters, String... arguments) {
        final List<String> command = new ArrayList<>();
        if (sigintIgnored()) {
            command.addAll(List.of("perl", "-e", "$SIG{INT} = 'DEFAULT'; exec { $ARGV[0] } @ARGV or die \"exec: $!\\n\";"));
        }
        command.addAll(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "--add-exports",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), "dev.tern.cli.Tern"));
        command.addAll(List.of(arguments));
        final ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("TERN_COUNTERS_DIR", counters.toString());
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        return builder;
    }

    /** Whether this process ignores SIGINT (bit 2 of SigIgn in /proc/self/status). */
    private static boolean sigintIgnored() {
        try {
            return Files.readAllLines(Path.of("/proc/self/status")).stream().filter(line -> line.startsWith("SigIgn:"))
                .anyMatch(line -> (Long.parseLong(line.substring(7).strip(), 16) & 0x2) != 0);
        } catch (IOException e) {
            return false;
        }
    }

    @ParameterizedTest(name = "ping {0}, then Ctrl-C")
    @ValueSource(strings = {"198.18.0.1", "198.18.0.77"})
    void pingStoppedByCtrlCPrintsStatisticsAndExits0AfterRepliesElse1(String host, @TempDir Path counters)
        throws IOException, InterruptedException {
        final boolean answers = host.equals("198.18.0.1");
        final Process ping = ternProcess(counters, "ping", "-i", "0.1", host).start();
        final BufferedReader lines = new BufferedReader(new InputStreamReader(ping.getInputStream(), StandardCharsets.UTF_8));
        final StringBuilder out = new StringBuilder();
        int replies = 0;
        for (String line; replies < 2 && (line = lines.readLine()) != null; ) {
            out.append(line).append('\n');
            if (line.contains(answers ? "bytes from" : "Destination Host Unreachable")) {
                replies++;
            }
        }
        assertEquals(2, replies, out.toString());
        assertEquals(0, new ProcessBuilder("kill", "-INT", Long.toString(ping.pid())).start().waitFor());
        assertTrue(ping.waitFor(20, TimeUnit.SECONDS), "ping stopped");
        out.append(new String(ping.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        assertEquals(answers ? 0 : 1, ping.exitValue(), out + new String(ping.getErrorStream().readAllBytes()));
        assertTrue(out.toString().contains("--- " + host + " ping statistics ---"), out.toString());
    }

    @Test
    void countersDirectoryThatCannotBeWrittenGetsOneLineNamingTernCountersDir(@TempDir Path directory)
        throws IOException, InterruptedException {
        final Path file = Files.writeString(directory.resolve("a-file"), "not a directory");
        final Process ping = ternProcess(file.resolve("counters"), "ping", "-c", "1", "198.18.0.1").start();
        final String err = new String(ping.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(ping.waitFor(30, TimeUnit.SECONDS));
        assertEquals(2, ping.exitValue(), err);
        assertEquals(1, err.lines().count(), err);
        assertTrue(err.startsWith("tern: cannot create a counters file in TERN_COUNTERS_DIR=" + file.resolve("counters")),
            err);
        assertTrue(err.contains("set TERN_COUNTERS_DIR to a directory you can write"), err);
        assertFalse(err.strip().matches(CLASS_NAME), err);
    }

    @Test
    void theDefaultCountersDirectoryIsTheUsersOwnAndStatReadsEveryUsers() throws IOException {
        final Path mine = dev.tern.core.counters.CountersFile.userDirectory();
        assertEquals(dev.tern.core.counters.CountersFile.defaultBase(), mine.getParent());
        assertEquals("tern-" + System.getProperty("user.name"), mine.getFileName().toString());
        Files.createDirectories(mine);
        final String property = System.clearProperty("tern.counters.dir");
        try {
            if (System.getenv("TERN_COUNTERS_DIR") == null) {
                assertEquals(mine, dev.tern.core.counters.CountersFile.defaultDirectory());
                assertTrue(dev.tern.core.counters.CountersFile.defaultReadDirectories().contains(mine));
            }
        } finally {
            if (property != null) {
                System.setProperty("tern.counters.dir", property);
            }
        }
    }

    @Test
    void ncWithWClosesAConnectionIdleForThatLongWithOneLineAndStatus1() throws IOException {
        final PipedOutputStream neverWritten = new PipedOutputStream();
        final InputStream stdin = new PipedInputStream(neverWritten);
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        final java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        final long started = System.nanoTime();
        final int status = new NcCommand(stdin, new java.io.PrintStream(out, true),
            new java.io.PrintStream(err, true, StandardCharsets.UTF_8)).run(new String[] {"-w", "0.5", "198.18.0.1", "9"});
        final double seconds = (System.nanoTime() - started) / 1e9;
        neverWritten.close();
        assertEquals(1, status, err.toString(StandardCharsets.UTF_8));
        assertEquals("tern: nc: no data either way for 0.5 s (-w): closing the connection",
            err.toString(StandardCharsets.UTF_8).strip());
        assertTrue(seconds > 0.5 && seconds < 3, "closed after about 0.5 s idle: " + seconds);
    }

    @Test
    void ncWithWLetsABusyConnectionRunLongerThanSeconds() throws IOException, InterruptedException {
        // 0.3 s bounds idleness, not the connection: bytes trickle for about a second and all arrive.
        final PipedOutputStream writer = new PipedOutputStream();
        final InputStream stdin = new PipedInputStream(writer);
        final Thread trickle = Thread.ofPlatform().daemon().start(() -> {
            try {
                for (int i = 0; i < 10; i++) {
                    writer.write(("line " + i + "\n").getBytes(StandardCharsets.US_ASCII));
                    writer.flush();
                    Thread.sleep(100);
                }
                writer.close();
            } catch (IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        final int status = new NcCommand(stdin, new java.io.PrintStream(out, true), System.err)
            .run(new String[] {"-w", "0.3", "198.18.0.1", "7"});
        assertEquals(0, status);
        assertEquals(10, out.toString(StandardCharsets.US_ASCII).lines().count(), out.toString());
        assertTrue(!trickle.isAlive() || trickle.join(java.time.Duration.ofSeconds(5)));
    }
}
