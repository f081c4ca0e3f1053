package dev.tern.cli;

import dev.tern.tcp.AckSample;
import dev.tern.tcp.CongestionControl;
import dev.tern.tcp.TcpControlBlocks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code --cc} with a congestion control from outside Tern: a class name, or a name a jar on the class path offers. */
class CongestionControlOptionTest {
    /** A window that never moves: the trace's cwnd column shows whether nc's connection used it. */
    public static final class FixedWindow implements CongestionControl {
        static final int WINDOW = 100 * 1460;

        @Override
        public String name() {
            return "fixed-window";
        }

        @Override
        public void init(TcpControlBlocks tcb, int c, int mss, int initialSegments, long nowNs) {
            tcb.cwnd(c, WINDOW);
            tcb.ssthresh(c, WINDOW);
        }

        @Override
        public void onAck(TcpControlBlocks tcb, int c, AckSample ack) {
        }

        @Override
        public void onCongestion(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
            tcb.ssthresh(c, WINDOW);
        }

        @Override
        public void onRetransmitTimeout(TcpControlBlocks tcb, int c, int flightSize, int mss, long nowNs) {
            tcb.cwnd(c, WINDOW);
        }
    }

    /** Runs nc with {@code loader} as the context class loader, as a jar on TERN_CLASSPATH would be seen. */
    private static TernCommandLineTest.Run ncWith(ClassLoader loader, byte[] input, String... args) {
        final Thread thread = Thread.currentThread();
        final ClassLoader before = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return TernCommandLineTest.nc(input, args);
        } finally {
            thread.setContextClassLoader(before);
        }
    }

    /** A jar whose only entry offers {@link FixedWindow} as a service. */
    private static URLClassLoader withServiceJar(Path directory) throws IOException {
        final Path jar = directory.resolve("fixed-window.jar");
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
            out.putNextEntry(new JarEntry("META-INF/services/" + CongestionControl.class.getName()));
            out.write((FixedWindow.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return new URLClassLoader(new URL[] {jar.toUri().toURL()}, CongestionControlOptionTest.class.getClassLoader());
    }

    private static void assertTheWindowStayedFixed(TernCommandLineTest.Run run, byte[] input, Path trace)
        throws IOException {
        assertEquals(0, run.status(), run.err());
        assertEquals(input.length, run.out().length());
        final List<String> records = Files.readAllLines(trace).subList(1, Files.readAllLines(trace).size());
        assertTrue(records.size() > 20, "a record per ACK: " + records.size());
        for (String record : records) {
            assertEquals(FixedWindow.WINDOW, Integer.parseInt(record.split(",")[3]), record);
        }
    }

    @Test
    void aClassNameSelectsTheClass(@TempDir Path directory) throws IOException {
        final byte[] input = new byte[1 << 20];
        final Path trace = directory.resolve("nc.csv");
        final TernCommandLineTest.Run run = TernCommandLineTest.nc(input, "--cc", FixedWindow.class.getName(),
            "--tcp-trace", trace.toString(), "198.18.0.1", "7");
        assertTheWindowStayedFixed(run, input, trace);
    }

    @Test
    void aNameAJarOffersSelectsItsClass(@TempDir Path directory) throws IOException {
        final byte[] input = new byte[1 << 20];
        final Path trace = directory.resolve("nc.csv");
        try (URLClassLoader loader = withServiceJar(directory)) {
            final TernCommandLineTest.Run run = ncWith(loader, input, "--cc", "fixed-window", "--tcp-trace",
                trace.toString(), "198.18.0.1", "7");
            assertTheWindowStayedFixed(run, input, trace);
        }
    }

    @Test
    void anUnknownNameIsOneLineNamingTheValidOnesThoseOfJarsToo(@TempDir Path directory) throws IOException {
        final Thread thread = Thread.currentThread();
        final ClassLoader before = thread.getContextClassLoader();
        try (URLClassLoader loader = withServiceJar(directory)) {
            thread.setContextClassLoader(loader);
            final TernCommandLineTest.Run run = TernCommandLineTest.tern("nc", "--cc", "vegas", "198.18.0.1", "7");
            assertEquals(2, run.status());
            assertEquals(List.of("tern: nc: unknown congestion control 'vegas' (valid: cubic, newreno, none, "
                + "fixed-window, or a class name)"), run.err().lines().toList());
        } finally {
            thread.setContextClassLoader(before);
        }
    }

    @Test
    void aClassThatCannotBeUsedIsOneLineSayingWhy() {
        final TernCommandLineTest.Run run = TernCommandLineTest.tern("nc", "--cc", "com.example.Vegas", "198.18.0.1",
            "7");
        assertEquals(2, run.status());
        assertEquals(List.of("tern: nc: congestion control class com.example.Vegas: not found"),
            run.err().lines().toList());
    }
}
