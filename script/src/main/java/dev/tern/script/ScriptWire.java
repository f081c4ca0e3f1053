package dev.tern.script;

import dev.tern.core.time.Clock;
import dev.tern.ethernet.memory.MemoryWire;
import dev.tern.ipv4.wire.Ipv4Header;
import dev.tern.ipv6.wire.Ipv6Header;

import java.util.List;

/**
 * The size of the runner's wire. Packetdrill injects through a tun device, which takes a packet of any length as
 * if GRO had joined it, so its scripts inject segments larger than the link's MTU. The wire is sized for the
 * largest packet a script injects, and the stack keeps the profile's MTU: its MSS and its own segments are as
 * before, and it takes the larger segment as one, as a host takes what GRO hands up.
 */
final class ScriptWire {
    /** The wire's frame buffers: the default wire's bytes, in at least this many frames. */
    private static final int MIN_FRAMES = 512;
    private static final long DEFAULT_BYTES = 4096L * 1500;
    /** The stack's smallest MTU ({@link dev.tern.stack.NetStack.Builder#mtu}); a smaller profile MTU stays as is. */
    private static final int STACK_MIN_MTU = 576;
    /** The most a TCP header may take with its options. */
    private static final int TCP_MAX_HEADER = 60;
    private static final int UDP_HEADER = 8;

    private ScriptWire() {
    }

    /**
     * The wire's MTU: the profile's, or the largest packet the script injects when that is larger, with an IPv6
     * header when {@code ipv6}.
     */
    static int mtu(List<ScriptLine> lines, ScriptProfile profile, boolean ipv6) {
        if (profile.mtu() < STACK_MIN_MTU) {
            return profile.mtu();
        }
        int largest = profile.mtu();
        final int ipHeader = ipv6 ? Ipv6Header.LENGTH : Ipv4Header.MIN_LENGTH;
        for (ScriptLine line : lines) {
            largest = Math.max(largest, ipHeader + injectedLength(line, profile.gsoMss()));
        }
        return Math.min(largest, 65535);
    }

    /** A wire of {@code mtu} for the runner's clock. */
    static MemoryWire build(Clock clock, int mtu) {
        return MemoryWire.builder().clock(clock).mtu(mtu).frames((int) Math.max(MIN_FRAMES, DEFAULT_BYTES / mtu))
            .build();
    }

    /**
     * At most how long the transport part of the packet a line injects is (TCP options counted as long as they may
     * be; an ICMP error's quote is short, within an IPv6 header and a TCP one); 0 for a line that injects nothing.
     */
    private static int injectedLength(ScriptLine line, int gsoMss) {
        return switch (line) {
            case ScriptLine.Packet p when p.inbound() -> TCP_MAX_HEADER
                + (gsoMss > 0 ? Math.min(gsoMss, p.payloadLength()) : p.payloadLength());
            case ScriptLine.Datagram d when d.inbound() -> UDP_HEADER + d.length();
            case ScriptLine.Icmp i when i.inbound() -> i.rawLength();
            default -> 0;
        };
    }
}
