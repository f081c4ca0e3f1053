package dev.tern.cli;

import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code tern exec} as a user runs it: the {@code tern} command in its own JVM starts an unmodified NIO program in
 * another, on the memory link (no device, no privilege), and the program's {@code SocketChannel.open()} reaches the
 * memory peer's echo service through Tern.
 */
class ExecCommandTest {
    private static final String JAVA = ProcessHandle.current().info().command().orElse("java");

    /** {@code java ... dev.tern.cli.Tern exec ARGS} with this JVM's class path (Tern's jars and the test programs). */
    private static ProcessBuilder ternExec(Path counters, String... arguments) {
        final List<String> command = new ArrayList<>(List.of(JAVA, "--enable-native-access=ALL-UNNAMED", "--add-exports",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), "dev.tern.cli.Tern", "exec"));
        command.addAll(List.of(arguments));
        final ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("TERN_COUNTERS_DIR", counters.toString());
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        return builder;
    }

    private static String program() {
        return program("NioEchoClient");
    }

    private static String program(String name) {
        return String.join(" ", JAVA, "-XX:TieredStopAtLevel=1", "-cp", testClasses(), "dev.tern.cli.programs." + name);
    }

    private static String testClasses() {
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            if (entry.endsWith("test-classes")) {
                return entry;
            }
        }
        throw new IllegalStateException("no test-classes on the class path");
    }

    /**
     * The agent must be a jar ({@code -javaagent}). {@code mvn test} in the reactor puts nio/target/classes on the
     * class path instead (no jar is packaged in that phase); {@code mvn verify} ({@code ./tern test}) has the jars.
     */
    private static void assumeTernJars() {
        final String location = String.valueOf(dev.tern.nio.TernSelectorProvider.class.getProtectionDomain()
            .getCodeSource().getLocation());
        if (!location.endsWith(".jar")) {
            ExternalTools.skip("Tern's provider comes from " + location + ", not a jar: mvn test without package; "
                + "mvn verify runs this");
        }
    }

    @Test
    void anUnmodifiedNioProgramEchoesThroughTheMemoryPeerAndShowsInTernStatUnderItsName(@TempDir Path counters)
        throws IOException, InterruptedException {
        assumeTernJars();
        final List<String> command = new ArrayList<>(List.of("--link", "memory", "--"));
        command.addAll(List.of(program().split(" ")));
        command.addAll(List.of("198.18.0.1", "7", "hold"));
        final Process exec = ternExec(counters, command.toArray(String[]::new)).redirectErrorStream(true).start();
        try {
            final StringBuilder output = new StringBuilder();
            final var reader = exec.inputReader(StandardCharsets.UTF_8);
            final long deadline = System.nanoTime() + 60_000_000_000L;
            String line;
            while (!output.toString().contains("echoed") && (line = reader.readLine()) != null
                && System.nanoTime() - deadline < 0) {
                output.append(line).append('\n');
            }
            assertTrue(output.toString().contains("echoed hello through whatever provider this JVM has via "
                + "dev.tern.nio.TernSelectorProvider"), output.toString());
            // The agent came on java's command line, not in the variable the JVM announces.
            assertFalse(output.toString().contains("Picked up JAVA_TOOL_OPTIONS"), output.toString());

            final TernCommandLineTest.Run stat = TernCommandLineTest.tern("stat", "--dir", counters.toString());
            assertTrue(stat.out().contains("stack NioEchoClient"), stat.out());
            assertTrue(stat.out().contains("nio.tcp.opened"), stat.out());
            assertTrue(stat.out().contains("tcp.tx.segments") || stat.out().contains("tcp.tx."), stat.out());
            exec.getOutputStream().close();
            assertTrue(exec.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, exec.exitValue(), output.toString());
        } finally {
            exec.descendants().forEach(ProcessHandle::destroyForcibly); // the program tern exec started
            exec.destroyForcibly();
        }
    }

    @Test
    void aMalformedRulesFileStopsBeforeTheProgramWithOneLineNamingFileAndLine(@TempDir Path counters, @TempDir Path dir)
        throws IOException, InterruptedException {
        final Path rules = Files.writeString(dir.resolve("rules.conf"), "tern connect 198.18.0.0/15\ntarn listen *:80\n");
        final List<String> command = new ArrayList<>(List.of("--rules", rules.toString(), "--"));
        command.addAll(List.of(program().split(" ")));
        command.addAll(List.of("198.18.0.1", "7"));
        final Process exec = ternExec(counters, command.toArray(String[]::new)).start();
        assertTrue(exec.waitFor(60, TimeUnit.SECONDS));
        final String err = new String(exec.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, exec.exitValue(), err);
        assertEquals("tern: exec: " + rules + ":2: unknown side 'tarn' (want tern or kernel)", err.strip());
    }

    @Test
    void anUnmodifiedClassicSocketClientEchoesThroughTern(@TempDir Path counters) throws IOException, InterruptedException {
        assumeTernJars();
        final List<String> command = new ArrayList<>(List.of("--link", "memory", "--"));
        command.addAll(List.of(program("ClassicEchoClient").split(" ")));
        command.addAll(List.of("198.18.0.1", "7"));
        final Process exec = ternExec(counters, command.toArray(String[]::new)).redirectErrorStream(true).start();
        try {
            assertTrue(exec.waitFor(60, TimeUnit.SECONDS));
            final String output = new String(exec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, exec.exitValue(), output);
            assertTrue(output.contains("classic echoed hello through a classic socket from /198.18.0.1:7"), output);
        } finally {
            exec.descendants().forEach(ProcessHandle::destroyForcibly); // the program tern exec started
            exec.destroyForcibly();
        }
    }

    @Test
    void anUnmodifiedClassicDatagramSocketClientEchoesThroughTern(@TempDir Path counters) throws IOException, InterruptedException {
        assumeTernJars();
        final List<String> command = new ArrayList<>(List.of("--link", "memory", "--"));
        command.addAll(List.of(program("ClassicUdpEchoClient").split(" ")));
        command.addAll(List.of("198.18.0.1", "7"));
        final Process exec = ternExec(counters, command.toArray(String[]::new)).redirectErrorStream(true).start();
        try {
            assertTrue(exec.waitFor(60, TimeUnit.SECONDS));
            final String output = new String(exec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, exec.exitValue(), output);
            assertTrue(output.contains("classic udp echoed hello through a classic datagram socket from /198.18.0.1:7"),
                output);
        } finally {
            exec.descendants().forEach(ProcessHandle::destroyForcibly); // the program tern exec started
            exec.destroyForcibly();
        }
    }

    /** A JDK home whose {@code release} file says Java 17, with a {@code bin/java} that fails if it is ever run. */
    private static Path oldJdk(Path dir) throws IOException {
        final Path bin = Files.createDirectories(dir.resolve("jdk-17/bin"));
        Files.writeString(dir.resolve("jdk-17/release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"17.0.15\"\n");
        final Path java = Files.writeString(bin.resolve("java"), "#!/bin/sh\necho 'the old java ran' >&2\nexit 99\n");
        assertTrue(java.toFile().setExecutable(true));
        return java;
    }

    @Test
    void aJavaOlderThan25OnThePathIsReplacedByTernsOwnJdkWithOneLineSayingSo(@TempDir Path counters, @TempDir Path dir)
        throws IOException, InterruptedException {
        assumeTernJars();
        final Path oldJava = oldJdk(dir);
        final List<String> command = new ArrayList<>(List.of("--link", "memory", "--", "java", "-XX:TieredStopAtLevel=1",
            "-cp", testClasses(), "dev.tern.cli.programs.ClassicEchoClient", "198.18.0.1", "7"));
        final ProcessBuilder builder = ternExec(counters, command.toArray(String[]::new));
        builder.environment().put("PATH", oldJava.getParent() + java.io.File.pathSeparator + System.getenv("PATH"));
        final Process exec = builder.start();
        try {
            assertTrue(exec.waitFor(60, TimeUnit.SECONDS));
            final String out = new String(exec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            final String err = new String(exec.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, exec.exitValue(), err);
            assertTrue(out.contains("classic echoed hello"), out + err);
            final List<String> said = err.lines().filter(l -> l.startsWith("tern: exec: java on PATH")).toList();
            assertEquals(1, said.size(), err);
            assertTrue(said.getFirst().contains("is Java 17") && said.getFirst().contains("(Java " + Runtime.version().feature() + ")"),
                said.getFirst());
            assertFalse(err.contains("the old java ran"), err);
        } finally {
            exec.descendants().forEach(ProcessHandle::destroyForcibly); // the program tern exec started
            exec.destroyForcibly();
        }
    }

    @Test
    void aJavaOlderThan25NamedByItsPathIsRefusedInOneLineNamingBothVersions(@TempDir Path counters, @TempDir Path dir)
        throws IOException, InterruptedException {
        final Path oldJava = oldJdk(dir);
        final Process exec = ternExec(counters, "--link", "memory", "--", oldJava.toString(), "-version").start();
        assertTrue(exec.waitFor(60, TimeUnit.SECONDS));
        final String err = new String(exec.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, exec.exitValue(), err);
        assertEquals("tern: exec: " + oldJava + " is Java 17; Tern needs 25 or newer (this tern runs on Java "
            + Runtime.version().feature() + ": " + Path.of(System.getProperty("java.home"), "bin", "java") + ")", err.strip());
    }

    @Test
    void aLinkThatCannotOpenIsRefusedInOneLineBeforeTheProgramStarts(@TempDir Path counters, @TempDir Path dir)
        throws IOException, InterruptedException {
        final Path marker = dir.resolve("started");
        final Process exec = ternExec(counters, "--link", "afpacket:nosuch0", "--", "/bin/sh", "-c",
            "touch " + marker).start();
        assertTrue(exec.waitFor(60, TimeUnit.SECONDS));
        final String err = new String(exec.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, exec.exitValue(), err);
        assertEquals(1, err.strip().lines().count(), err);
        assertTrue(err.startsWith("tern: ") && err.contains("nosuch0"), err);
        assertFalse(Files.exists(marker), "the program never started");
    }

    @Test
    void execWithoutAProgramIsAUsageError() {
        final TernCommandLineTest.Run run = TernCommandLineTest.tern("exec", "--link", "memory");
        assertEquals(2, run.status());
        assertTrue(run.err().startsWith("tern: exec: put the program after --"), run.err());
    }
}
