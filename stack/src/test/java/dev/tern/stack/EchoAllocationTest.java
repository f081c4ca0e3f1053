package dev.tern.stack;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.testing.Allocations;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A stack answering echo requests allocates nothing per packet in steady state: Ethernet, IPv4 input, ICMP,
 * output, and for large requests reassembly and fragmentation too; nor does a server loop's turn that finds no
 * connection to accept. A raw port injects prebuilt requests and
 * swallows the replies; all of it runs on the measuring thread. The warm-up is long enough for C2 to compile the
 * path: until then the JDK's own {@code MemorySegment.copy} allocates, before escape analysis removes it.
 */
class EchoAllocationTest {
    private static final int US = Ipv4Address.parse("198.18.0.2");
    private static final int PEER = Ipv4Address.parse("198.18.0.1");
    private static final long PEER_MAC = MacAddress.parse("0a:00:00:00:00:01");
    private static final int WARMUP = Integer.getInteger("warmup", 200_000);

    @ParameterizedTest
    @ValueSource(ints = {56, 4000})
    void answeringAnEchoRequestAllocatesNothing(int size) {
        final VirtualClock clock = new VirtualClock();
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build(); Arena arena = Arena.ofConfined()) {
            final MemoryLink peer = wire.attach("peer", PEER_MAC);
            final NetStack stack = NetStack.builder().link(wire.attach("us", 0x0200_0000_0002L)).address("198.18.0.2/24")
                .clock(clock).countersInMemory().build();
            // Fragments of one echo request, as the peer would send them (1480-byte pieces).
            final byte[] message = Frames.echoRequest(1, 1, Frames.pattern(size, 1));
            final int pieces = (message.length + 1479) / 1480;
            final MemorySegment[] frames = new MemorySegment[pieces];
            for (int i = 0; i < pieces; i++) {
                final int start = i * 1480;
                final int end = Math.min(message.length, start + 1480);
                final int flags = (end < message.length ? 0x2000 : 0) | (start >>> 3);
                final byte[] frame = Frames.ethernet(stack.macAddress(), PEER_MAC, EtherType.IPV4,
                    Frames.ipv4(PEER, US, 1, 7, flags, 64, java.util.Arrays.copyOfRange(message, start, end)));
                frames[i] = arena.allocate(frame.length);
                MemorySegment.copy(frame, 0, frames[i], ValueLayout.JAVA_BYTE, 0, frame.length);
            }
            final TxFrame tx = new TxFrame();
            // The peer asks for our address first, so we know its MAC and replies need no ARP.
            final byte[] arp = Frames.ethernet(MacAddress.BROADCAST, PEER_MAC, EtherType.ARP, Frames.arp(1, PEER_MAC, PEER, 0, US));
            peer.claim(tx);
            MemorySegment.copy(arp, 0, tx.segment(), ValueLayout.JAVA_BYTE, tx.offset(), arp.length);
            tx.length(arp.length);
            peer.commit(tx);
            peer.flush();
            stack.poll(clock.nanoTime());
            final int rounds = size > 1000 ? 300_000 : 1_000_000;
            final long[] requestsAndReplies = measureEchoes(clock, peer, stack, tx, frames, rounds,
                "echo requests of " + size + " bytes");
            assertEquals(requestsAndReplies[0] * pieces, requestsAndReplies[1], "every request answered");
            stack.close();
        }
    }

    /**
     * IPv6 too: the peer's solicitation makes it known (RFC 4861 §7.2.3), then each echo request goes through the
     * fixed header, the extension-header walk, the ICMPv6 checksum, the neighbour cache and output with nothing
     * allocated.
     */
    @Test
    void answeringAnIpv6EchoRequestAllocatesNothing() {
        final VirtualClock clock = new VirtualClock();
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build(); Arena arena = Arena.ofConfined()) {
            final MemoryLink peer = wire.attach("peer", PEER_MAC);
            final dev.tern.core.net.Ipv6Address us = dev.tern.core.net.Ipv6Address.parse("2001:db8::2");
            final dev.tern.core.net.Ipv6Address them = dev.tern.core.net.Ipv6Address.parse("2001:db8::1");
            final NetStack stack = NetStack.builder().link(wire.attach("us", 0x0200_0000_0002L)).address("198.18.0.2/24")
                .ipv6(dev.tern.ipv6.Ipv6Config.withAddresses(java.util.List.of(
                    dev.tern.core.net.Ipv6InterfaceAddress.parse("2001:db8::2/64"))).withDadTransmits(0))
                .clock(clock).countersInMemory().build();
            final TxFrame tx = new TxFrame();
            final byte[] solicitation = dev.tern.stack.testing.Ipv6Frames.frame(
                dev.tern.core.net.Ipv6Address.multicastMac(us.solicitedNode().low()), PEER_MAC,
                dev.tern.stack.testing.Ipv6Frames.icmpPacket(them, us.solicitedNode(), 255, 135, 0, 0,
                    dev.tern.stack.testing.Ipv6Frames.ndBody(us, 1, PEER_MAC)));
            final byte[] request = dev.tern.stack.testing.Ipv6Frames.frame(stack.macAddress(), PEER_MAC,
                dev.tern.stack.testing.Ipv6Frames.icmpPacket(them, us, 64, 128, 0, 0x0001_0001, Frames.pattern(56, 1)));
            final MemorySegment[] frames = {arena.allocate(request.length)};
            MemorySegment.copy(request, 0, frames[0], ValueLayout.JAVA_BYTE, 0, request.length);
            Frames.send(peer, tx, new MemorySegment[]{copy(arena, solicitation)});
            stack.poll(clock.nanoTime());
            final long[] requestsAndReplies = measureEchoes(clock, peer, stack, tx, frames, 1_000_000,
                "IPv6 echo requests");
            assertEquals(requestsAndReplies[0], requestsAndReplies[1], "every request answered");
            assertEquals(requestsAndReplies[0] + 2, stack.counters().value("icmp6.tx.echo_replies"));
            stack.close();
        }
    }

    /**
     * Sends {@code frames} (one request) and takes the replies, twice to settle, then {@code rounds} times measured:
     * asserts nothing was allocated and returns the measured requests and reply frames.
     */
    private static long[] measureEchoes(VirtualClock clock, MemoryLink peer, NetStack stack, TxFrame tx,
                                        MemorySegment[] frames, int rounds, String what) {
        final int[] replyFrames = {0};
        final long[] requests = {0};
        final FrameHandler swallow = (segment, offset, length, flags) -> replyFrames[0]++;
        final Runnable roundTrip = () -> {
            requests[0]++;
            Frames.send(peer, tx, frames);
            stack.poll(clock.nanoTime());
            peer.receive(swallow, 64);
        };
        roundTrip.run();
        roundTrip.run();
        peer.receive(swallow, 64);
        replyFrames[0] = 0;
        requests[0] = 0;
        final long bytes = Allocations.measure(WARMUP, rounds, roundTrip);
        assertEquals(0, bytes, "bytes allocated answering " + rounds + " " + what);
        return new long[]{requests[0], replyFrames[0]};
    }

    private static MemorySegment copy(Arena arena, byte[] bytes) {
        final MemorySegment segment = arena.allocate(bytes.length);
        MemorySegment.copy(bytes, 0, segment, ValueLayout.JAVA_BYTE, 0, bytes.length);
        return segment;
    }

    /**
     * A server loop asks its listener for a connection at every turn ({@code tern serve}'s): with none waiting, on
     * the stack's own thread, that allocates nothing. (A capturing lambda made per call, which JFR found to be most of
     * what a {@code tern serve} shard allocated under a SYN flood, does not show here: in this small loop C2 inlines
     * the call and removes it. {@code TcpListener.accept} no longer makes one.)
     */
    @Test
    void askingAListenerWithNoConnectionWaitingAllocatesNothing() throws TernSocketException {
        final VirtualClock clock = new VirtualClock();
        try (MemoryWire wire = MemoryWire.builder().clock(clock).build()) {
            final NetStack stack = NetStack.builder().link(wire.attach("us", 0x0200_0000_0002L)).address("198.18.0.2/24")
                .clock(clock).countersInMemory().build();
            final TcpListener listener = stack.listen(80, 16, dev.tern.tcp.TcpOptions.DEFAULT);
            final int[] accepted = {0};
            final Runnable turn = () -> {
                stack.poll(clock.nanoTime());
                try {
                    if (listener.accept() != null) {
                        accepted[0]++;
                    }
                } catch (TernSocketException e) {
                    throw new IllegalStateException(e);
                }
            };
            final long bytes = Allocations.measure(WARMUP, 1_000_000, turn);
            assertEquals(0, bytes, "bytes allocated over 1,000,000 turns asking the listener");
            assertEquals(0, accepted[0], "nothing to accept");
            listener.close();
            stack.close();
        }
    }
}
