package dev.tern.tcp;

import dev.tern.tcp.testing.Seg;
import dev.tern.tcp.testing.TcpHarness;
import example.FixedRatePacer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import static dev.tern.tcp.testing.TcpHarness.MS;
import static dev.tern.tcp.testing.TcpHarness.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A congestion control from outside the project, selected by name: offered as a service by a jar on the class path,
 * or named by its class. Connections on a simulated wire show it took over (its window and pacing rate).
 */
class CongestionControlCatalogTest {
    private static final int MSS = 1460;
    private static final String PACER_CLASS = FixedRatePacer.class.getName();
    private final ClassLoader testLoader = getClass().getClassLoader();

    /** A jar holding the example's class and the services entry naming it, as a user would ship it. */
    private static Path pacerJar(Path directory) throws IOException {
        final Path jar = directory.resolve("pacer.jar");
        final String classFile = PACER_CLASS.replace('.', '/') + ".class";
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file);
             InputStream classBytes = FixedRatePacer.class.getResourceAsStream("/" + classFile)) {
            out.putNextEntry(new JarEntry(classFile));
            classBytes.transferTo(out);
            out.putNextEntry(new JarEntry("META-INF/services/" + CongestionControl.class.getName()));
            out.write((PACER_CLASS + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return jar;
    }

    /** A harness whose layer is built while {@code loader} is the context class loader. */
    private static TcpHarness harnessWith(ClassLoader loader, TcpConfig config) {
        final Thread thread = Thread.currentThread();
        final ClassLoader before = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return new TcpHarness(config);
        } finally {
            thread.setContextClassLoader(before);
        }
    }

    private static void establish(TcpHarness h, TcpOptions options) {
        h.connect(options);
        h.expect(Seg.SYN);
        h.send(Seg.SYN_ACK.mss(MSS).seq(TcpHarness.REMOTE_ISS).ack(TcpHarness.LOCAL_ISS + 1));
        h.expect(Seg.ACK);
    }

    /** The pacer's window, not the initial ten segments, limits the first flight: 20 segments leave unacknowledged. */
    private static void assertThePacerSends(TcpHarness h) {
        final TcpInfo info = h.tcp.info(h.conn);
        assertEquals(FixedRatePacer.NAME, info.congestionControl());
        assertEquals(FixedRatePacer.WINDOW, info.cwnd());
        assertEquals(FixedRatePacer.RATE, info.pacingRate());
        h.write(bytes(20 * MSS));
        h.advance(50 * MS);
        assertEquals(20, h.pending().size(), "all 20 segments in flight");
    }

    @Test
    void aJarOnTheClassPathOffersItsControlByName(@TempDir Path directory) throws IOException {
        try (URLClassLoader jarLoader = new URLClassLoader(new URL[] {pacerJar(directory).toUri().toURL()},
            testLoader)) {
            assertEquals(TcpLayer.BUILT_IN_CONGESTION_CONTROLS, new CongestionControlCatalog(testLoader).names(),
                "the services entry is in the jar only");
            final CongestionControlCatalog catalog = new CongestionControlCatalog(jarLoader);
            assertEquals(List.of("cubic", "newreno", "none", "dctcp", "bbr", FixedRatePacer.NAME), catalog.names());
            assertInstanceOf(FixedRatePacer.class, catalog.resolve(FixedRatePacer.NAME));

            try (TcpHarness h = harnessWith(jarLoader, TcpHarness.config().congestionControl(FixedRatePacer.NAME)
                .build())) {
                assertTrue(h.tcp.congestionControlNames().contains(FixedRatePacer.NAME));
                establish(h, TcpOptions.DEFAULT);
                assertThePacerSends(h);
            }
            try (TcpHarness h = harnessWith(jarLoader, TcpHarness.config().build())) {
                establish(h, TcpOptions.DEFAULT.withCongestionControl(FixedRatePacer.NAME));
                assertThePacerSends(h);
            }
        }
    }

    @Test
    void tcpCongestionSwitchesAnEstablishedConnectionToADiscoveredControl(@TempDir Path directory)
        throws IOException {
        try (URLClassLoader jarLoader = new URLClassLoader(new URL[] {pacerJar(directory).toUri().toURL()},
            testLoader); TcpHarness h = harnessWith(jarLoader, TcpHarness.config().build())) {
            assertEquals(List.of("cubic", "newreno", "none", "dctcp", "bbr", FixedRatePacer.NAME), h.tcp.congestionControlNames(),
                "listed before anything names it (a script's TCP_CONGESTION checks the list)");
            establish(h, TcpOptions.DEFAULT);
            assertEquals("cubic", h.tcp.congestionControlName(h.conn));
            assertEquals(0, h.tcp.congestionControl(h.conn, FixedRatePacer.NAME, h.now()));
            assertThePacerSends(h);
        }
    }

    @Test
    void withoutTheJarTheNameIsUnknown() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            assertEquals(TcpLayer.BUILT_IN_CONGESTION_CONTROLS, h.tcp.congestionControlNames());
            assertEquals(-TcpError.INVALID, h.tcp.connect(TcpHarness.PEER, TcpHarness.REMOTE_PORT,
                TcpHarness.LOCAL_PORT, TcpOptions.DEFAULT.withCongestionControl(FixedRatePacer.NAME), h.events,
                h.now()));
        }
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new TcpHarness(TcpHarness.config().congestionControl(FixedRatePacer.NAME).build()));
        assertEquals("unknown congestion control 'fixedrate' (valid: cubic, newreno, none, dctcp, bbr, or a class name)",
            e.getMessage());
    }

    @Test
    void aClassNameSelectsItForNewConnectionsAndTcpCongestion() {
        try (TcpHarness h = new TcpHarness(TcpHarness.config().build())) {
            establish(h, TcpOptions.DEFAULT.withCongestionControl(PACER_CLASS));
            assertThePacerSends(h);
            assertTrue(h.tcp.congestionControlNames().contains(FixedRatePacer.NAME), "registered once loaded");
        }
        try (TcpHarness h = new TcpHarness(TcpHarness.config().congestionControl(PACER_CLASS).build())) {
            establish(h, TcpOptions.DEFAULT);
            assertThePacerSends(h);
        }
        try (TcpHarness h = TcpHarness.established()) {
            assertEquals(-TcpError.INVALID, h.tcp.congestionControl(h.conn, "example.Missing", h.now()));
            assertEquals("cubic", h.tcp.congestionControlName(h.conn));
            assertEquals(0, h.tcp.congestionControl(h.conn, PACER_CLASS, h.now()));
            assertEquals(FixedRatePacer.NAME, h.tcp.congestionControlName(h.conn));
            assertEquals(FixedRatePacer.WINDOW, h.tcp.info(h.conn).cwnd(), "the switch started it from init");
        }
    }

    /** Variations of the example, each unusable for one reason. */
    public abstract static class Abstract extends FixedRatePacer {
    }

    public static final class NeedsAnArgument extends FixedRatePacer {
        public NeedsAnArgument(int rate) {
        }
    }

    public static final class Throws extends FixedRatePacer {
        public Throws() {
            throw new IllegalStateException("no licence");
        }
    }

    public static final class CallsItselfCubic extends FixedRatePacer {
        @Override
        public String name() {
            return "cubic";
        }
    }

    private String errorFor(String name) {
        return assertThrows(IllegalArgumentException.class, () -> new CongestionControlCatalog(testLoader)
            .resolve(name)).getMessage();
    }

    @Test
    void aClassThatCannotBeUsedSaysWhy() {
        final String nested = getClass().getName() + "$";
        assertEquals("congestion control class example.Missing: not found", errorFor("example.Missing"));
        assertEquals("congestion control class java.lang.String: not a dev.tern.tcp.CongestionControl",
            errorFor("java.lang.String"));
        assertEquals("congestion control class " + nested + "Abstract: not a public concrete class",
            errorFor(nested + "Abstract"));
        assertEquals("congestion control class " + nested + "NeedsAnArgument: no public no-arg constructor",
            errorFor(nested + "NeedsAnArgument"));
        assertEquals("congestion control class " + nested + "Throws: constructor threw "
            + "java.lang.IllegalStateException: no licence", errorFor(nested + "Throws"));
        assertEquals("congestion control class " + nested + "CallsItselfCubic is named 'cubic', which "
            + CubicCongestionControl.class.getName() + " already is", errorFor(nested + "CallsItselfCubic"));
        assertEquals("unknown congestion control 'vegas' (valid: cubic, newreno, none, dctcp, bbr, or a class name)",
            errorFor("vegas"));
    }

    @Test
    void aBuiltInClassNameIsTheBuiltIn() {
        assertInstanceOf(NewRenoCongestionControl.class,
            new CongestionControlCatalog(testLoader).resolve(NewRenoCongestionControl.class.getName()));
    }
}
