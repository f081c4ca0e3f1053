package dev.tern.conformance.interop;

import dev.tern.ethernet.wire.MacAddress;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static dev.tern.testkit.netns.NetnsHarness.PEER_IPV4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ARP between Tern and the Linux kernel, both ways, over a veth pair in namespaces the test makes (RFC 826,
 * RFC 5227): the kernel resolves Tern's address to Tern's MAC, Tern resolves the kernel's, Tern defends its address
 * against a probe, and Tern's announcement corrects a stale entry in the kernel's cache.
 */
class ArpInteropTest extends VethRigTest {
    private static final Set<String> RESOLVED = Set.of("REACHABLE", "STALE", "DELAY", "PROBE");

    static Stream<VethSetup> setups() {
        return VethSetup.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void kernelResolvesTernsAddressToTernsMac(VethSetup setup) {
        rig = VethRig.start(setup);
        assertEquals("NONE", rig.kernel().neighbour(NetnsHarness.TERN_ADDRESS).state(), "a fresh kernel knows nothing");

        final KernelPeer.PingOutcome ping = rig.kernel().ping(1, 56, 0.2);

        assertEquals(1, ping.received(), ping.output());
        final KernelPeer.Neighbour entry = rig.kernel().neighbour(NetnsHarness.TERN_ADDRESS);
        assertEquals(rig.ternMac(), entry.mac(), "the kernel's entry for 198.18.0.2 holds Tern's MAC");
        assertTrue(RESOLVED.contains(entry.state()), "resolved, not " + entry.state());
        assertEquals(1, rig.counter("arp.rx.requests"), "the kernel asked once");
        assertEquals(1, rig.counter("arp.tx.replies"), "Tern answered once");
        assertEquals(rig.net().peerMac(), (long) rig.call(s -> s.neighbours().peek(PEER_IPV4)),
            "Tern learned the kernel from its request, which was addressed to Tern (RFC 826 merge rule)");
        assertNoDropsOrErrors();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("setups")
    void ternResolvesTheKernelsAddressToItsMac(VethSetup setup) {
        rig = VethRig.start(setup);
        assertEquals("none", rig.call(s -> s.neighbours().stateOf(PEER_IPV4)));

        final VethRig.PingReply reply = rig.pingKernelAndWait(1, 56);

        assertNotNull(reply, "the kernel answered once Tern had resolved it");
        assertEquals(rig.net().peerMac(), (long) rig.call(s -> s.neighbours().peek(PEER_IPV4)));
        assertEquals("reachable", rig.call(s -> s.neighbours().stateOf(PEER_IPV4)), "confirmed by the kernel's reply");
        assertEquals(1, rig.counter("arp.rx.replies"));
        assertEquals(0, rig.counter("arp.resolve_failed"));
        assertEquals(1, rig.counter("arp.pending.sent"), "the echo request waited for ARP, then left");
        final KernelPeer.Neighbour entry = rig.kernel().neighbour(NetnsHarness.TERN_ADDRESS);
        assertEquals(rig.ternMac(), entry.mac(), "the kernel learned Tern from Tern's request");
        assertNoDropsOrErrors();
    }

    @Test
    void ternAnswersTheKernelsAddressProbeSoTheAddressIsSeenInUse() {
        rig = VethRig.start(VethSetup.DEFAULT);

        // RFC 5227 §2.1.1: a probe has sender protocol address 0.0.0.0; the owner of the address must answer it.
        final CommandResult probe = rig.kernel().arping("-0", "-c", "2", "-W", "0.1", "-w", "3");

        assertEquals(0, probe.exitCode(), "arping got an answer: " + probe.stdout() + probe.stderr());
        assertTrue(probe.stdout().contains("2 packets transmitted, 2 packets received"), probe.stdout());
        assertTrue(probe.stdout().toLowerCase().contains(MacAddress.format(rig.ternMac()).toLowerCase()),
            "answered from Tern's MAC: " + probe.stdout());
        assertEquals(2, rig.counter("arp.tx.replies"));
        assertEquals("none", rig.call(s -> s.neighbours().stateOf(0)), "nothing learned from a probe");
        assertEquals(0, rig.counter("arp.address_conflicts"), "a probe is not a conflict");
    }

    @Test
    void ternsAnnouncementCorrectsTheKernelsStaleEntryForItsAddress() throws InterruptedException {
        rig = VethRig.create(VethSetup.DEFAULT);
        final long wrongMac = 0x0200_5EED_0001L;
        rig.kernel().setNeighbour(NetnsHarness.TERN_ADDRESS, wrongMac, "stale");
        assertEquals(wrongMac, rig.kernel().neighbour(NetnsHarness.TERN_ADDRESS).mac());

        rig.startTern();

        // Two announcements, 2 s apart (RFC 5227 §2.3); Linux updates an existing entry from a gratuitous ARP.
        final long deadline = System.nanoTime() + 3_500_000_000L;
        KernelPeer.Neighbour entry = rig.kernel().neighbour(NetnsHarness.TERN_ADDRESS);
        while (entry.mac() != rig.ternMac() && System.nanoTime() - deadline < 0) {
            Thread.sleep(50);
            entry = rig.kernel().neighbour(NetnsHarness.TERN_ADDRESS);
        }
        assertEquals(rig.ternMac(), entry.mac(), "the kernel took Tern's MAC from its announcement: " + entry);
        assertTrue(rig.counter("arp.tx.requests") >= 1, "announcements are counted as requests");
    }

    private void assertNoDropsOrErrors() {
        assertEquals(0, rig.counter("stack.internal_errors"));
        final Map<String, Long> drops = rig.countersContaining(".drop.");
        assertEquals(Map.of(), drops, "nothing the kernel sent was dropped");
    }
}
