package dev.tern.conformance.fuzz;

import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Bugs in other modules found by the conformance work (fuzzing and kernel runs), one reproducer each, kept as
 * regression tests: each failed before its fix. Each runs one {@link FuzzStack} (the same
 * invariants and output oracle as the fuzz harnesses) on a fresh stack 198.18.0.2/24 whose peer is 198.18.0.1.
 */
class FindingsTest {
    private static FuzzStack.Frame frame(byte[] bytes) {
        return new FuzzStack.Frame(1_000_000, 0, bytes);
    }

    /**
     * RFC 1122 §3.2.1.3: a directed broadcast address ({@code <network>.-1}) MUST NOT be a source address, and a host
     * MUST silently discard a datagram whose source is not valid (the same section). Tern answered an echo request
     * from 198.18.0.255 with an echo reply to 198.18.0.255, in an Ethernet broadcast frame: one spoofed frame makes
     * Tern send to the whole subnet (a smurf reflector).
     *
     * <p>Where it was: {@code ipv4/Ipv4Layer.receive}, the martian-source check, drops multicast, limited broadcast, 127/8
     * and 240/4 sources but not {@code address.broadcast()} (for prefixes up to /30); it should drop that too
     * (Linux: {@code ip_route_input_slow} counts it as a martian source).
     */
    @Test
    void echoRequestFromTheSubnetBroadcastAddressIsDiscarded() {
        final byte[] echo = Frames.echoRequestFrame(FuzzStack.MAC, FuzzStack.PEER_MAC, FuzzStack.BROADCAST_IP, FuzzStack.IP,
            5, 1, new byte[16]);
        final List<CapturedFrame> sent = FuzzStack.run(List.of(frame(echo)));
        assertEquals(0, sent.stream().filter(CapturedFrame::isIpv4).count(), "nothing sent in answer: " + sent);
    }

    /**
     * RFC 1122 §3.2.2: "An ICMP error message MUST NOT be sent as the result of receiving ... a datagram sent as a
     * link-layer broadcast". Tern answered a datagram of an unknown protocol addressed to its own IP but sent to the
     * Ethernet broadcast address with protocol unreachable. (Every host on the segment that accepts such a frame
     * would answer at once; Linux checks {@code skb->pkt_type != PACKET_HOST} in {@code __icmp_send}.)
     *
     * <p>Where it was: {@code ipv4/Ipv4Layer.onPacket} receives {@code destinationMac} but drops it; {@code kind} is decided
     * from the IP destination only, so {@code IcmpLayer.errorAllowed} sees UNICAST. A link-layer broadcast or
     * multicast destination MAC should make the packet not UNICAST for error purposes (the same flag would let the
     * transport refuse port unreachable later). RFC 1122 §3.3.6 also says a host SHOULD discard such a datagram
     * outright; Tern also answers an echo request sent that way.
     */
    @Test
    void noIcmpErrorAboutADatagramReceivedAsALinkLayerBroadcast() {
        final byte[] datagram = Frames.ethernet(MacAddress.BROADCAST, FuzzStack.PEER_MAC, 0x0800,
            Frames.ipv4(FuzzStack.PEER_IP, FuzzStack.IP, 253, 1, 0, 64, new byte[20]));
        final List<CapturedFrame> sent = FuzzStack.run(List.of(frame(FuzzStack.peerArpRequest()), frame(datagram)));
        assertEquals(0, sent.stream().filter(f -> f.icmpType() == 3).count(), "no ICMP error: " + sent);
    }

    /**
     * The echo reply to an echo request whose identifier, sequence and data are all zero carries ICMP checksum
     * 0x0000; the only value that verifies is 0xFFFF (the words sum to +0, so the checksum is ~0). Linux counts such a
     * reply in {@code Icmp.InCsumErrors} and drops it; tshark marks it bad. Found by the fuzzer ({@code icmpMessages}
     * in under a second, {@code ipv4Datagrams} in 27 s, once the stack knew the peer's MAC).
     *
     * <p>Where it was: {@code ipv4/IcmpLayer.echoRequest} derives the reply's checksum from the request's with
     * {@code core/InternetChecksum.update16} (RFC 1624 eqn. 3). For a request with checksum 0xF7FF and all other words
     * zero that gives ~(0x0800 + 0xF7FF + 0) = 0x0000. Returning 0xFFFF instead of 0x0000 from {@code update16} and
     * {@code update32} is always right (when the new words sum to -0 both values verify; when they sum to +0 only
     * 0xFFFF does), and its Javadoc's claim that it "never yields 0x0000 ... by accident" should go.
     */
    @Test
    void echoReplyToAnAllZeroEchoRequestHasAChecksumThatVerifies() {
        final byte[] echo = Frames.echoRequestFrame(FuzzStack.MAC, FuzzStack.PEER_MAC, FuzzStack.PEER_IP, FuzzStack.IP, 0, 0,
            new byte[1]);
        final List<CapturedFrame> sent = FuzzStack.run(List.of(frame(FuzzStack.peerArpRequest()), frame(echo)));
        final CapturedFrame reply = sent.stream().filter(f -> f.icmpType() == 0).findFirst().orElseThrow();
        assertEquals(0xFFFF, reply.u16(14 + 20 + 2), "the only checksum of an all-zero message");
    }

    /**
     * The same rule on the reassembly path, found by the fuzzer ({@code ipv4Datagrams}, 2 s): fragment 0 of a datagram to our address, sent as a link-layer broadcast
     * and never completed, gets ICMP time exceeded (code 1) 30 s later.
     *
     * <p>Where it was: {@code ipv4/Ipv4Layer.reassemblyTimedOut} decides UNICAST from the IP destination alone; the
     * reassembler would have to remember how fragment 0 arrived.
     */
    @Test
    void noTimeExceededAboutAFragmentReceivedAsALinkLayerBroadcast() {
        final byte[] echo = Frames.echoRequest(0x7E57, 1, Frames.pattern(100, 5));
        final byte[] fragment0 = Frames.ethernet(MacAddress.BROADCAST, FuzzStack.PEER_MAC, 0x0800,
            Frames.ipv4(FuzzStack.PEER_IP, FuzzStack.IP, 1, 0x7E01, 0x2000, 64, java.util.Arrays.copyOf(echo, 64)));
        final List<CapturedFrame> sent = FuzzStack.run(List.of(frame(FuzzStack.peerArpRequest()), frame(fragment0)));
        assertEquals(0, sent.stream().filter(f -> f.icmpType() == 11).count(), "no time exceeded: " + sent);
    }
}
