package dev.tern.testkit.netns;

import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Loss injected by the kernel between the ends ({@link PacketLoss}): the rules drop what they should, count what they
 * see, change level in place, and leave nothing behind, whether closed or not; with a wire namespace they sit on its
 * ports and the ends still reach each other through its bridge.
 */
class PacketLossTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void thresholdsAreHundredthsOfAPercentOfTenThousand() {
        assertEquals(0, PacketLoss.threshold(0));
        assertEquals(10, PacketLoss.threshold(0.1));
        assertEquals(100, PacketLoss.threshold(1));
        assertEquals(500, PacketLoss.threshold(5));
        assertEquals(10_000, PacketLoss.threshold(100));
        assertThrows(IllegalArgumentException.class, () -> PacketLoss.threshold(-1));
        assertThrows(IllegalArgumentException.class, () -> PacketLoss.threshold(100.5));
        assertThrows(IllegalArgumentException.class, () -> PacketLoss.threshold(Double.NaN));
    }

    @Test
    void theScriptHooksBothWaysAndReplacesTheTableAtomically() {
        final String script = PacketLoss.script(100, "ingress", "wt", "ingress", "wp");
        assertTrue(script.startsWith("table netdev tern_loss\ndelete table netdev tern_loss\n"), script);
        assertTrue(script.contains("chain to_peer {\n    type filter hook ingress device \"wt\""), script);
        assertTrue(script.contains("chain from_peer {\n    type filter hook ingress device \"wp\""), script);
        assertEquals(2, script.split("numgen random mod 10000 < 100 counter drop", -1).length - 1, script);
        assertFalse(PacketLoss.script(10_000, "ingress", "a", "egress", "a").contains("numgen"),
            "all: a plain drop (numgen's 0..9999 is never < 10000)");
    }

    private static String tables(NetworkNamespace namespace) {
        return namespace.exec(WAIT, "nft", "list", "tables").orThrow().stdout();
    }

    private static CommandResult ping(NetnsHarness net, int count) {
        return net.peerExec(WAIT, "ping", "-c", Integer.toString(count), "-i", "0.2", "-W", "1", NetnsHarness.TERN_ADDRESS);
    }

    @Test
    void onThePeersDeviceAllLossSilencesThePeerNoLossCountsAndCloseRemovesTheTable() {
        ExternalTools.require("nft", "nftables");
        try (NetnsHarness net = NetnsTesting.harness()) {
            final PacketLoss loss = PacketLoss.install(net, 100);
            assertEquals(net.peerNamespace(), loss.namespace());
            assertTrue(tables(net.peerNamespace()).contains("table netdev tern_loss"));

            // The kernel asks ARP for an address on the link: every request dies on its way out.
            assertEquals(1, ping(net, 3).exitCode());
            final PacketLoss.Counts dropped = loss.counts();
            assertTrue(dropped.fromPeerDropped() >= 1 && dropped.fromPeerDropped() == dropped.fromPeerPackets(), dropped.toString());
            assertEquals(100.0, dropped.droppedPercent(), 1e-9);

            loss.percent(0);
            assertEquals(new PacketLoss.Counts(0, 0, 0, 0), loss.counts(), "a new level starts counting again");
            ping(net, 2);
            final PacketLoss.Counts passed = loss.counts();
            assertTrue(passed.fromPeerPackets() >= 1 && passed.dropped() == 0, passed.toString());

            loss.close();
            loss.close();
            assertFalse(tables(net.peerNamespace()).contains("tern_loss"), "the table is gone");
            assertThrows(IllegalStateException.class, () -> loss.percent(1));
        }
    }

    @Test
    void withAWireTheRulesSitOnTheBridgePortsAndDropBothWays() {
        ExternalTools.require("nft", "nftables");
        try (NetnsHarness net = NetnsTesting.harness(NetnsHarness.Options.defaults().wire(true))) {
            // Give Tern's end a kernel address for this test only, so that the kernel answers from both ends.
            net.ternExec(WAIT, "ip", "address", "add", NetnsHarness.TERN_ADDRESS + "/24", "dev", NetnsHarness.TERN_INTERFACE).orThrow();
            assertEquals(0, ping(net, 2).exitCode(), "the ends reach each other through the wire's bridge");
            try (PacketLoss loss = PacketLoss.install(net, 50)) {
                assertEquals(net.wireNamespace(), loss.namespace());
                assertFalse(tables(net.peerNamespace()).contains("tern_loss"), "nothing on the peer's own device");
                net.peerExec(WAIT, "ping", "-c", "200", "-i", "0.002", "-W", "1", "-q", NetnsHarness.TERN_ADDRESS);
                final PacketLoss.Counts counts = loss.counts();
                assertTrue(counts.fromPeerDropped() > 0 && counts.toPeerDropped() > 0, "echoes and replies lost: " + counts);
                assertEquals(50, counts.droppedPercent(), 15, counts.toString());
            }
            assertFalse(tables(net.wireNamespace()).contains("tern_loss"));
        }
    }

    @Test
    void rulesLeftInstalledGoWithTheNamespaceAndCloseAfterThatIsHarmless() {
        ExternalTools.require("nft", "nftables");
        final NetnsHarness net = NetnsTesting.harness(NetnsHarness.Options.defaults().wire(true));
        final PacketLoss loss;
        try {
            loss = PacketLoss.install(net, 1);
        } finally {
            net.close();
        }
        assertFalse(net.wireNamespace().exists());
        loss.close();
    }
}
