package dev.tern.tcp;

import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.tcp.testing.App;
import dev.tern.tcp.testing.SegmentingLink;
import dev.tern.tcp.testing.TcpHarness;
import dev.tern.tcp.testing.TcpNetwork;
import dev.tern.tcp.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static dev.tern.tcp.testing.FrameCheck.assertFrame;
import static dev.tern.tcp.testing.FrameCheck.checksumValid;
import static dev.tern.tcp.testing.FrameCheck.payload;
import static dev.tern.tcp.testing.Seg.ACK;
import static dev.tern.tcp.testing.Seg.PSH_ACK;
import static dev.tern.tcp.testing.TcpHarness.LOCAL_ISS;
import static dev.tern.tcp.testing.TcpHarness.REMOTE_ISS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Segmentation and checksum offload, and connections to our own address (loopback). */
class OffloadTest {
    private static final long SECOND = 1_000_000_000L;

    private static byte[] random(int length, long seed) {
        final byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return data;
    }

    private static void transfer(TcpNetwork net, TestStack sender, TestStack receiver, byte[] data) {
        final App server = new App(receiver, net::now);
        final App client = new App(sender, net::now);
        server.closeOnEof = true;
        assertTrue(receiver.tcp.listen(80, 4, server) >= 0);
        client.connection = sender.tcp.connect(receiver.address(), 80, 0, TcpOptions.DEFAULT, client, net.now());
        client.closeWhenSent = true;
        client.send(data);
        assertTrue(net.runUntil(() -> client.closedError >= 0
            && receiver.tcp.connectionCount() == receiver.tcp.timeWaitCount(), 60 * SECOND));
        assertArrayEquals(data, server.received.toByteArray());
    }

    @Test
    void withSegmentationOffloadTheSenderHandsTheLinkLargeFramesThatArriveAsMssSegments() {
        try (TcpNetwork net = new TcpNetwork()) {
            final SegmentingLink[] gso = new SegmentingLink[1];
            final TestStack sender = net.add("sender", "198.18.0.1/24", TcpConfig.defaults(), 64,
                link -> gso[0] = new SegmentingLink(link));
            final TestStack receiver = net.add("receiver", "198.18.0.2/24", TcpConfig.defaults());
            final byte[] data = random(4 << 20, 1);
            transfer(net, sender, receiver, data);
            assertTrue(sender.counter("tcp.tx.tso_segments") > 0);
            assertTrue(gso[0].segmentsCut > 10 * gso[0].superFrames, gso[0].segmentsCut + " from " + gso[0].superFrames);
            assertEquals(0, receiver.counter("tcp.drop.bad_checksum"));
            assertEquals(0, sender.counter("tcp.tx.retransmits"));
        }
    }

    @Test
    void withChecksumOffloadCorruptedFramesAreStillCaughtAndResent() {
        try (TcpNetwork net = new TcpNetwork(MemoryWire.builder().checksumOffload(true).corruption(0.02).seed(5))) {
            final TestStack sender = net.add("sender", "198.18.0.1/24", TcpConfig.defaults());
            final TestStack receiver = net.add("receiver", "198.18.0.2/24", TcpConfig.defaults());
            final byte[] data = random(1 << 20, 2);
            transfer(net, sender, receiver, data);
            assertTrue(receiver.counter("tcp.drop.bad_checksum") + receiver.counter("ipv4.drop.bad_checksum") > 0);
        }
    }

    @Test
    void withoutChecksumOffloadSegmentsCarryAChecksumThatVerifiesAlsoAcrossTheSendRingsOddWrap() {
        // A 1 KiB send ring: once 1001 bytes are acknowledged, the next 100 lie as 23 bytes at the ring's end (an odd
        // first piece) and 77 at its start, whose sum must count byte-swapped (RFC 1071 §2(B)).
        try (TcpHarness h = TcpHarness.established(TcpHarness.config().sendBufferSize(1024).build(), TcpOptions.DEFAULT)) {
            assertEquals(0, h.stack.link.offloads() & Offloads.TX_L4_CHECKSUM, "the checksum is ours to compute");
            final byte[] first = random(1001, 4);
            h.write(first);
            assertFrame(h.expect(PSH_ACK.seq(LOCAL_ISS + 1).len(1001)), checksumValid(), payload(first));
            h.send(ACK.seq(REMOTE_ISS + 1).ack(LOCAL_ISS + 1002));
            final byte[] second = random(100, 5);
            h.write(second);
            assertFrame(h.expect(PSH_ACK.seq(LOCAL_ISS + 1002).len(100)), checksumValid(), payload(second));
        }
    }

    @Test
    void aConnectionToOurOwnAddressGoesThroughTheLoopback() {
        try (TcpNetwork net = new TcpNetwork()) {
            final TestStack stack = net.add("self", "198.18.0.1/24", TcpConfig.defaults());
            final byte[] data = random(300_000, 3);
            transfer(net, stack, stack, data);
            assertTrue(stack.counter("ipv4.loopback.packets") > 0);
        }
    }

    @Test
    void congestionControlIsChosenPerConnectionByName() {
        try (TcpNetwork net = new TcpNetwork()) {
            final TestStack a = net.add("a", "198.18.0.1/24", TcpConfig.defaults());
            final TestStack b = net.add("b", "198.18.0.2/24", TcpConfig.defaults());
            assertTrue(a.tcp.listen(80, 4, TcpEvents.NONE) >= 0);
            assertEquals(-TcpError.INVALID, b.tcp.connect(a.address(), 80, 0,
                TcpOptions.DEFAULT.withCongestionControl("bbr9"), TcpEvents.NONE, net.now()));
            final int c = b.tcp.connect(a.address(), 80, 0, TcpOptions.DEFAULT.withCongestionControl("none"),
                TcpEvents.NONE, net.now());
            assertTrue(net.runUntil(() -> b.tcp.state(c) == TcpState.ESTABLISHED, SECOND));
            assertEquals("none", b.tcp.congestionControlName(c));
            assertTrue(b.tcp.cwnd(c) >= 1 << 30);
            assertEquals(0, b.tcp.congestionControl(c, "newreno", net.now()));
            assertEquals(10 * 1460, b.tcp.cwnd(c));
            assertEquals(-TcpError.INVALID, b.tcp.congestionControl(c, "nope", net.now()));
        }
    }
}
