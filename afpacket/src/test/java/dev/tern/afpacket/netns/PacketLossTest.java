package dev.tern.afpacket.netns;

import dev.tern.afpacket.NetnsTesting;
import dev.tern.core.testing.ExternalTools;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Loss injected by the kernel on the peer's end ({@link PacketLoss}): the rules drop what they should, count what they
 * see, change level in place, and leave nothing behind, whether closed or not.
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
    void theScriptHooksBothWaysOfThePeersDeviceAndReplacesTheTableAtomically() {
        final String script = PacketLoss.script(100);
        assertTrue(script.startsWith("table netdev tern_loss\ndelete table netdev tern_loss\n"), script);
        assertTrue(script.contains("type filter hook ingress device \"peer0\""), script);
        assertTrue(script.contains("type filter hook egress device \"peer0\""), script);
        assertEquals(2, script.split("numgen random mod 10000 < 100 counter drop", -1).length - 1, script);
        assertFalse(PacketLoss.script(10_000).contains("numgen"), "all: a plain drop (numgen's 0..9999 is never < 10000)");
    }

    private static String tables(NetnsHarness net) {
        return net.peerExec(WAIT, "nft", "list", "tables").orThrow().stdout();
    }

    private static String gsoMaxSegs(NetnsHarness net) {
        final String details = net.peerNamespace().ip("-d", "link", "show", "dev", NetnsHarness.PEER_INTERFACE).stdout();
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("gso_max_segs (\\d+)").matcher(details);
        assertTrue(m.find(), details);
        return m.group(1);
    }

    @Test
    void allLossSilencesThePeerNoLossCountsWithoutDroppingAndCloseRemovesEverything() {
        ExternalTools.require("nft", "nftables");
        try (NetnsHarness net = NetnsTesting.harness()) {
            final String segs = gsoMaxSegs(net);
            final PacketLoss loss = PacketLoss.onPeer(net, 100);
            assertTrue(tables(net).contains("table netdev tern_loss"));
            assertEquals("1", gsoMaxSegs(net), "the peer's TCP hands its device single segments while rules drop");

            // The kernel asks ARP for an address on the link: every request dies on the way out.
            final CommandResult silent = net.peerExec(WAIT, "ping", "-c", "3", "-i", "0.2", "-W", "1", NetnsHarness.TERN_ADDRESS);
            assertEquals(1, silent.exitCode(), silent.stdout());
            final PacketLoss.Counts dropped = loss.counts();
            assertTrue(dropped.egressDropped() >= 1 && dropped.egressDropped() == dropped.egressPackets(), dropped.toString());
            assertEquals(100.0, dropped.droppedPercent(), 1e-9);

            loss.percent(0);
            assertEquals(new PacketLoss.Counts(0, 0, 0, 0), loss.counts(), "a new level starts counting again");
            net.peerExec(WAIT, "ping", "-c", "2", "-i", "0.2", "-W", "1", NetnsHarness.TERN_ADDRESS);
            final PacketLoss.Counts passed = loss.counts();
            assertTrue(passed.egressPackets() >= 1 && passed.dropped() == 0, passed.toString());

            loss.close();
            loss.close();
            assertFalse(tables(net).contains("tern_loss"), "the table is gone");
            assertEquals(segs, gsoMaxSegs(net), "gso_max_segs as it was");
            assertThrows(IllegalStateException.class, () -> loss.percent(1));
        }
    }

    @Test
    void rulesLeftInstalledGoWithTheNamespaceAndCloseAfterThatIsHarmless() {
        ExternalTools.require("nft", "nftables");
        final NetnsHarness net = NetnsTesting.harness();
        final PacketLoss loss;
        try {
            loss = PacketLoss.onPeer(net, 1);
        } finally {
            net.close();
        }
        assertFalse(net.peerNamespace().exists());
        loss.close();
    }
}
