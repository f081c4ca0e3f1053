package dev.tern.testkit.netns;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The harness builds what DESIGN.md's "Testing the network for real, safely" asks for, and always removes it. */
class NetnsHarnessTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static String namespaces() {
        return Commands.run(WAIT, Commands.require("ip", "iproute2"), "netns", "list").orThrow().stdout();
    }

    @Test
    void ternSideHasNoKernelAddressNoIpv6AndNoForwarding() {
        try (NetnsHarness net = NetnsTesting.harness(NetnsHarness.Options.defaults().mtu(1400))) {
            final NetworkNamespace tern = net.ternNamespace();
            final String ternAddresses = tern.ip("address", "show").stdout();
            assertFalse(ternAddresses.contains("inet "), "no IPv4 address on the Tern side: " + ternAddresses);
            assertFalse(ternAddresses.contains("inet6"), "no IPv6 address on the Tern side: " + ternAddresses);
            assertEquals("", tern.ip("-4", "route", "show", "table", "all").stdout().strip(), "no IPv4 route out");
            assertEquals("1", tern.sysctl("net.ipv6.conf.tern0.disable_ipv6"));
            assertEquals("0", tern.sysctl("net.ipv4.ip_forward"));
            assertTrue(tern.ip("link", "show", "dev", NetnsHarness.TERN_INTERFACE).stdout().contains("mtu 1400"));

            final String peerAddresses = net.peerNamespace().ip("address", "show", "dev", NetnsHarness.PEER_INTERFACE).stdout();
            assertTrue(peerAddresses.contains("inet 198.18.0.1/24"), peerAddresses);
            assertTrue(peerAddresses.contains("mtu 1400"), peerAddresses);
            assertNotEquals(net.ternMac(), net.peerMac());
        }
    }

    @Test
    void aWireIsABridgeWithoutAddressesBetweenTheEndsAndGoesWithTheHarness() {
        final NetnsHarness net = NetnsTesting.harness(NetnsHarness.Options.defaults().mtu(1400).wire(true)
            .offloads(EthtoolOffloads.ALL_OFF));
        final NetworkNamespace wire = net.wireNamespace();
        try {
            assertTrue(wire.name().endsWith("-w"), wire.name());
            final String links = wire.ip("-d", "link", "show").stdout();
            assertTrue(links.contains("wt@") && links.contains("wp@") && links.contains("br0"), links);
            assertEquals(2, links.split("master br0").length - 1, links);
            assertFalse(wire.ip("address", "show").stdout().contains("inet"), "no address in the wire");
            assertEquals("", wire.ip("-4", "route", "show", "table", "all").stdout().strip(), "no route in the wire");
            assertTrue(wire.exec(WAIT, "ethtool", "-k", NetnsHarness.WIRE_PEER_PORT).stdout()
                .contains("tcp-segmentation-offload: off"), "the ports get the ends' offloads");
            assertEquals("", net.ternNamespace().ip("-4", "route", "show", "table", "all").stdout().strip(), "no route from Tern's end");
        } finally {
            net.close();
        }
        assertFalse(wire.exists(), "the wire goes with the harness");
    }

    @Test
    void kernelCongestionControlGoesOnTheSubnetRouteOnlyWhereTheKernelHasAnAddress() {
        try (NetnsHarness net = NetnsTesting.harness()) {
            assertEquals(List.of(net.peerNamespace().name()), net.kernelCongestionControl("cubic"));
            final String peerRoutes = net.peerNamespace().ip("-4", "route", "show").stdout();
            assertTrue(peerRoutes.contains("198.18.0.0/24") && peerRoutes.contains("congctl cubic"), peerRoutes);
            assertTrue(peerRoutes.contains("src 198.18.0.1"), "the route keeps its source: " + peerRoutes);
            assertEquals("", net.ternNamespace().ip("-4", "route", "show", "table", "all").stdout().strip(),
                "Tern's end still has no route");

            net.ternExec(WAIT, "ip", "address", "add", "198.18.0.2/24", "dev", NetnsHarness.TERN_INTERFACE).orThrow();
            assertEquals(List.of(net.peerNamespace().name(), net.ternNamespace().name()), net.kernelCongestionControl("reno"));
            assertTrue(net.ternNamespace().ip("-4", "route", "show").stdout().contains("congctl reno"));
            final String replaced = net.peerNamespace().ip("-4", "route", "show").stdout();
            assertTrue(replaced.contains("congctl reno") && !replaced.contains("cubic"), replaced);
            assertThrows(IllegalArgumentException.class, () -> net.kernelCongestionControl("cubic; reboot"));
        }
    }

    @Test
    void stoppingABackgroundShellEndsTheProgramsItStarted() {
        try (NetnsHarness net = NetnsTesting.harness()) {
            final BackgroundCommand pipeline = net.startInPeer("sh", "-c", "sleep 300 | sleep 301");
            final long deadline = System.nanoTime() + WAIT.toNanos();
            List<ProcessHandle> children = List.of();
            while (children.size() < 2 && System.nanoTime() - deadline < 0) {
                children = ProcessHandle.of(pipeline.pid()).orElseThrow().descendants().toList();
            }
            assertEquals(2, children.size(), children.toString());
            pipeline.stop();
            children.forEach(child -> assertFalse(child.isAlive(), child.info().commandLine().orElse("?") + " ended"));
        }
    }

    @Test
    void harnessesGetTheirOwnNamesAndCloseDeletesBothNamespaces() {
        NetnsTesting.assumeNetns();
        final NetnsHarness first = NetnsHarness.create();
        final NetnsHarness second = NetnsHarness.create();
        final List<String> names = List.of(first.ternNamespace().name(), first.peerNamespace().name(),
            second.ternNamespace().name(), second.peerNamespace().name());
        try {
            assertEquals(4, names.stream().distinct().count(), names.toString());
            final String pid = Long.toString(ProcessHandle.current().pid());
            names.forEach(name -> assertTrue(name.startsWith("tern-" + pid + "-"), name));
            names.forEach(name -> assertTrue(namespaces().contains(name), name));
        } finally {
            first.close();
            second.close();
        }
        first.close();
        names.forEach(name -> assertFalse(namespaces().contains(name), name + " deleted"));
    }

    @Test
    void aSetupThatFailsHalfWayRemovesWhatItMade() {
        NetnsTesting.assumeNetns();
        final List<String> made = new ArrayList<>();
        final IllegalStateException failure = assertThrows(IllegalStateException.class, () -> NetnsHarness.create(
            NetnsHarness.Options.defaults(), harness -> {
                made.add(harness.ternNamespace().name());
                made.add(harness.peerNamespace().name());
                throw new IllegalStateException("setup step failed");
            }));
        assertEquals("setup step failed", failure.getMessage());
        assertEquals(2, made.size());
        made.forEach(name -> assertFalse(namespaces().contains(name), name + " removed after the failure"));
    }

    @Test
    void callRunsTheBodyInsideTheNamespaceAndReturnsTheThreadEvenWhenItThrows() throws IOException {
        try (NetnsHarness net = NetnsTesting.harness()) {
            final Path self = Path.of("/proc/thread-self/ns/net");
            final String outside = Files.readSymbolicLink(self).toString();
            final String expectedInside = net.ternExec(WAIT, "readlink", "/proc/self/ns/net").orThrow().stdout().strip();
            final String inside = net.ternNamespace().call(() -> {
                try {
                    return Files.readSymbolicLink(self).toString();
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            assertEquals(expectedInside, inside);
            assertNotEquals(outside, inside);
            assertEquals(outside, Files.readSymbolicLink(self).toString(), "back where it was");

            assertThrows(ArithmeticException.class, () -> net.ternNamespace().run(() -> {
                throw new ArithmeticException("inside");
            }));
            assertEquals(outside, Files.readSymbolicLink(self).toString(), "back where it was after a throw");
        }
    }

    @Test
    void aHarnessLeftOpenIsRemovedByTheShutdownHookWhenTheJvmExits() {
        NetnsTesting.assumeNetns();
        final String java = ProcessHandle.current().info().command().orElseThrow();
        final CommandResult child = Commands.run(Duration.ofSeconds(60), java, "--enable-native-access=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), HarnessLeftOpen.class.getName()).orThrow();
        final List<String> names = child.stdout().strip().lines().toList();
        assertEquals(2, names.size(), child.stdout() + child.stderr());
        names.forEach(name -> assertFalse(namespaces().contains(name), name + " removed by the child's shutdown hook"));
    }

    /** The child JVM: builds a harness, prints its namespaces and exits without closing it. */
    static final class HarnessLeftOpen {
        public static void main(String[] args) {
            final NetnsHarness net = NetnsHarness.create();
            System.out.println(net.ternNamespace().name());
            System.out.println(net.peerNamespace().name());
            System.exit(0);
        }
    }
}
