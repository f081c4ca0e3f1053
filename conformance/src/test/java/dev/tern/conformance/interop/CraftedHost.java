package dev.tern.conformance.interop;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.arp.wire.ArpPacket;
import dev.tern.conformance.replay.CapturedFrame;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;
import dev.tern.testkit.netns.NetnsHarness;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Hosts that exist only as frames, on one end of the veth pair: a packet socket ({@link AfPacketLink}) opened inside
 * that end's namespace sends hand-made frames from addresses no kernel owns ({@link #FIRST_ADDRESS} and up, all
 * behind one locally administered MAC, {@link #MAC}) and keeps every frame that arrives, so a test sees exactly what
 * the other end answered and in what order. It answers ARP requests for its addresses (RFC 826), so that answers can
 * reach it. The kernel of its own namespace drops what is sent to {@link #MAC} (not its interface's address), so it
 * neither answers those frames nor resets the connections the test opens from here.
 *
 * <p>The socket ignores frames sent on its interface (PACKET_IGNORE_OUTGOING), its own and those of any other
 * socket or the kernel there. Owned by the test thread; the harness closes the link.
 */
final class CraftedHost {
    /** Locally administered (bit 1 of the first octet), so it belongs to no NIC. */
    static final long MAC = MacAddress.parse("02:74:65:72:6e:09");
    /** 198.18.0.9 .. 198.18.0.99: addresses of the subnet no namespace of the rig owns. */
    static final int FIRST_ADDRESS = NetnsHarness.PEER_IPV4 + 8;
    static final int LAST_ADDRESS = NetnsHarness.PEER_IPV4 + 98;
    private static final int RECEIVE_BATCH = 64;

    private final AfPacketLink link;
    private final TxFrame tx = new TxFrame();
    private final List<CapturedFrame> received = new ArrayList<>();
    private int delivered;

    private CraftedHost(AfPacketLink link) {
        this.link = link;
    }

    /** On the kernel peer's end ({@value NetnsHarness#PEER_INTERFACE}): frames to whoever is on Tern's end. */
    static CraftedHost onPeerEnd(NetnsHarness net) {
        return new CraftedHost(net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults()));
    }

    /** On Tern's end ({@value NetnsHarness#TERN_INTERFACE}): frames to the kernel peer, beside Tern's own socket. */
    static CraftedHost onTernEnd(NetnsHarness net) {
        return new CraftedHost(net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults()));
    }

    static boolean owns(int address) {
        return address >= FIRST_ADDRESS && address <= LAST_ADDRESS;
    }

    /** Sends one IPv6 packet to {@code destinationMac}. */
    void sendIpv6(long destinationMac, byte[] packet) {
        send(Frames.ethernet(destinationMac, MAC, EtherType.IPV6, packet));
    }

    /** Sends one IPv4 datagram to {@code destinationMac}. */
    void sendIpv4(long destinationMac, byte[] datagram) {
        send(Frames.ethernet(destinationMac, MAC, EtherType.IPV4, datagram));
    }

    /**
     * Broadcasts an ARP request from {@code address} for {@code target}: the target learns {@code address} from it
     * (RFC 826, a request for its own address) and answers.
     */
    void announce(int address, int target) {
        send(Frames.ethernet(MacAddress.BROADCAST, MAC, EtherType.ARP,
            Frames.arp(ArpPacket.OPERATION_REQUEST, MAC, address, 0, target)));
    }

    private void send(byte[] frame) {
        if (!link.claim(tx)) {
            throw new AssertionError("no transmit slot on " + link.name());
        }
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, tx.segment(), tx.offset(), frame.length);
        tx.length(frame.length);
        link.commit(tx);
        if (link.flush() != 1) {
            throw new AssertionError("the frame did not leave " + link.name() + " (errno " + link.lastTransmitErrno()
                + ")");
        }
    }

    /**
     * Receives until a frame that matches {@code last} arrives, and returns the frames that arrived since the previous
     * call, in order, up to and including that one; fails after {@code timeout}. ARP requests for this host's
     * addresses are answered on the way (and returned too).
     */
    List<CapturedFrame> receiveThrough(Predicate<CapturedFrame> last, Duration timeout, String what) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        int checked = delivered;
        while (true) {
            for (; checked < received.size(); checked++) {
                if (last.test(received.get(checked))) {
                    final List<CapturedFrame> frames = List.copyOf(received.subList(delivered, checked + 1));
                    delivered = checked + 1;
                    return frames;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no " + what + " within " + timeout + " on " + link.name() + "; "
                    + (received.size() - delivered) + " other frames arrived");
            }
            link.awaitFrames(10);
            final int before = received.size();
            link.receive((segment, offset, length, flags) ->
                received.add(new CapturedFrame(VethRig.epochNowNs(),
                    segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE))),
                RECEIVE_BATCH);
            for (int i = before; i < received.size(); i++) {
                answerArp(received.get(i));
            }
        }
    }

    private void answerArp(CapturedFrame frame) {
        if (frame.arpOperation() == ArpPacket.OPERATION_REQUEST && owns(frame.arpTargetIp())) {
            send(Frames.ethernet(frame.source(), MAC, EtherType.ARP,
                Frames.arp(ArpPacket.OPERATION_REPLY, MAC, frame.arpTargetIp(), frame.source(), frame.arpSenderIp())));
        }
    }
}
