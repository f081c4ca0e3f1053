package dev.tern.stack.testing;

import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.memory.MemoryLink;
import dev.tern.ethernet.wire.EtherType;
import dev.tern.ethernet.wire.EthernetHeader;
import dev.tern.stack.sim.Simulation;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * A peer played by a test on a {@link Simulation}'s wire: sends hand-made frames and records every frame it
 * receives (promiscuously, so it also sees broadcasts and frames for others), with the virtual time of arrival.
 */
public final class PeerPort {
    /** One received frame and when it arrived. */
    public record Received(long atNs, byte[] bytes) {
        public int etherType() {
            return BigEndian.u16(MemorySegment.ofArray(bytes), 12);
        }

        public MemorySegment segment() {
            return MemorySegment.ofArray(bytes);
        }

        /** The IPv4 protocol, or -1 for other frames. */
        public int ipProtocol() {
            return etherType() == EtherType.IPV4 ? bytes[EthernetHeader.LENGTH + 9] & 0xFF : -1;
        }

        /** The ICMP type of an IPv4/ICMP frame without options, or -1. */
        public int icmpType() {
            return ipProtocol() == 1 ? bytes[EthernetHeader.LENGTH + 20] & 0xFF : -1;
        }
    }

    private final Simulation sim;
    private final MemoryLink link;
    private final TxFrame tx = new TxFrame();
    private final List<Received> received = new ArrayList<>();

    public PeerPort(Simulation sim, String name, long mac) {
        this.sim = sim;
        this.link = sim.addPort(name, mac);
        link.promiscuous(true);
        sim.onPoll(this::receive);
    }

    private void receive() {
        link.receive((segment, offset, length, flags) -> {
            final byte[] bytes = new byte[length];
            MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, bytes, 0, length);
            received.add(new Received(sim.nowNs(), bytes));
        }, 100_000);
    }

    public long mac() {
        return link.macAddress();
    }

    /** Sends one frame now (delivered on the next simulation step). */
    public void send(byte[] frame) {
        Frames.send(link, tx, frame);
    }

    /** Everything that reached this port so far (the simulation receives for it on every poll). */
    public List<Received> drain() {
        receive();
        return received;
    }

    public List<Received> drain(Predicate<Received> filter) {
        return drain().stream().filter(filter).toList();
    }

    public void clear() {
        drain();
        received.clear();
    }
}
