package dev.tern.cli;

import dev.tern.tcp.CongestionControl;
import example.FixedRatePacer;
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

/**
 * {@code --cc} with a congestion control from outside Tern (docs/TCP.md's example, from tcp's test jar): a class name,
 * or a name a jar on the class path offers. The trace's cwnd and pacing columns show nc's connection used it.
 */
class CongestionControlOptionTest {
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

    /** A jar whose only entry offers {@link FixedRatePacer} as a service (its class is on the test class path). */
    private static URLClassLoader withServiceJar(Path directory) throws IOException {
        final Path jar = directory.resolve("pacer.jar");
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
            out.putNextEntry(new JarEntry("META-INF/services/" + CongestionControl.class.getName()));
            out.write((FixedRatePacer.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return new URLClassLoader(new URL[] {jar.toUri().toURL()}, CongestionControlOptionTest.class.getClassLoader());
    }

    private static void assertThePacerRan(TernCommandLineTest.Run run, byte[] input, Path trace)
        throws IOException {
        assertEquals(0, run.status(), run.err());
        assertEquals(input.length, run.out().length());
        final List<String> lines = Files.readAllLines(trace);
        final List<String> records = lines.subList(1, lines.size());
        assertTrue(records.size() > 20, "a record per ACK: " + records.size());
        for (String record : records) {
            final String[] columns = record.split(",");
            assertEquals(FixedRatePacer.WINDOW, Integer.parseInt(columns[3]), "cwnd: " + record);
            assertEquals(FixedRatePacer.RATE, Long.parseLong(columns[16]), "pacing_bps: " + record);
        }
    }

    @Test
    void aClassNameSelectsTheClass(@TempDir Path directory) throws IOException {
        final byte[] input = new byte[1 << 20];
        final Path trace = directory.resolve("nc.csv");
        final TernCommandLineTest.Run run = TernCommandLineTest.nc(input, "--cc", FixedRatePacer.class.getName(),
            "--tcp-trace", trace.toString(), "198.18.0.1", "7");
        assertThePacerRan(run, input, trace);
    }

    @Test
    void aNameAJarOffersSelectsItsClass(@TempDir Path directory) throws IOException {
        final byte[] input = new byte[1 << 20];
        final Path trace = directory.resolve("nc.csv");
        try (URLClassLoader loader = withServiceJar(directory)) {
            final TernCommandLineTest.Run run = ncWith(loader, input, "--cc", FixedRatePacer.NAME, "--tcp-trace",
                trace.toString(), "198.18.0.1", "7");
            assertThePacerRan(run, input, trace);
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
            assertEquals(List.of("tern: nc: unknown congestion control 'vegas' (valid: cubic, newreno, none, dctcp, bbr, "
                + "fixedrate, or a class name)"), run.err().lines().toList());
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
