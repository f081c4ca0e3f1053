package dev.tern.tcp.testing;

import dev.tern.tcp.wire.TcpFlags;

import java.util.Arrays;

/**
 * A check on a captured segment, composable in the style of gVisor's {@code checker} package:
 * {@code assertFrame(f, ipv4(src(US), dst(PEER)), tcp(seq(n), flags(ACK), noOptions()))}. A failing check returns a
 * description of what differed, else null.
 */
@FunctionalInterface
public interface FrameCheck {
    String check(Captured frame);

    static void assertFrame(Captured frame, FrameCheck... checks) {
        for (FrameCheck check : checks) {
            final String failure = check.check(frame);
            if (failure != null) {
                throw new AssertionError(failure + " in " + frame);
            }
        }
    }

    static FrameCheck ipv4(FrameCheck... checks) {
        return all(checks);
    }

    static FrameCheck tcp(FrameCheck... checks) {
        return all(checks);
    }

    static FrameCheck all(FrameCheck... checks) {
        return frame -> {
            for (FrameCheck check : checks) {
                final String failure = check.check(frame);
                if (failure != null) {
                    return failure;
                }
            }
            return null;
        };
    }

    static FrameCheck src(int address) {
        return f -> f.ip().source() == address ? null : "source " + f.ip().source();
    }

    static FrameCheck dst(int address) {
        return f -> f.ip().destination() == address ? null : "destination " + f.ip().destination();
    }

    static FrameCheck dontFragment() {
        return f -> (f.ip().flagsAndFragmentOffset() & 0x4000) != 0 ? null : "DF not set";
    }

    static FrameCheck srcPort(int port) {
        return f -> f.tcp().sourcePort() == port ? null : "source port " + f.tcp().sourcePort() + " not " + port;
    }

    static FrameCheck dstPort(int port) {
        return f -> f.tcp().destinationPort() == port ? null : "destination port " + f.tcp().destinationPort()
            + " not " + port;
    }

    static FrameCheck seq(int seq) {
        return f -> f.tcp().seq() == seq ? null : "seq " + Integer.toUnsignedString(f.tcp().seq()) + " not "
            + Integer.toUnsignedString(seq);
    }

    static FrameCheck ack(int ack) {
        return f -> f.tcp().ack() == ack ? null : "ack " + Integer.toUnsignedString(f.tcp().ack()) + " not "
            + Integer.toUnsignedString(ack);
    }

    static FrameCheck flags(int flags) {
        return f -> f.tcp().flags() == flags ? null : "flags " + TcpFlags.format(f.tcp().flags()) + " not "
            + TcpFlags.format(flags);
    }

    /** The given flags are set (others may be too). */
    static FrameCheck flagsSet(int flags) {
        return f -> (f.tcp().flags() & flags) == flags ? null : "flags " + TcpFlags.format(f.tcp().flags())
            + " lack " + TcpFlags.format(flags);
    }

    static FrameCheck window(int window) {
        return f -> f.tcp().window() == window ? null : "window " + f.tcp().window() + " not " + window;
    }

    static FrameCheck payloadLength(int length) {
        return f -> f.payload().length == length ? null : "payload length " + f.payload().length + " not " + length;
    }

    static FrameCheck payload(byte[] bytes) {
        return f -> Arrays.equals(f.payload(), bytes) ? null : "payload differs";
    }

    static FrameCheck mss(int mss) {
        return f -> f.tcp().mss() == mss ? null : "mss " + f.tcp().mss() + " not " + mss;
    }

    static FrameCheck windowScale(int scale) {
        return f -> f.tcp().windowScale() == scale ? null : "wscale " + f.tcp().windowScale() + " not " + scale;
    }

    static FrameCheck sackPermitted(boolean present) {
        return f -> f.tcp().sackPermitted() == present ? null : "sackOK " + f.tcp().sackPermitted();
    }

    static FrameCheck timestamp(boolean present) {
        return f -> f.tcp().timestamp() == present ? null : "timestamp " + f.tcp().timestamp();
    }

    static FrameCheck tsEcr(int ecr) {
        return f -> f.tcp().timestamp() && f.tcp().tsEcr() == ecr ? null : "TSecr " + f.tcp().tsEcr() + " not " + ecr;
    }

    /** SACK blocks exactly these (left, right pairs, first block first). */
    static FrameCheck sackBlocks(int... blocks) {
        return f -> Arrays.equals(f.tcp().sackBlocks(), blocks) ? null : "SACK blocks "
            + Arrays.toString(f.tcp().sackBlocks()) + " not " + Arrays.toString(blocks);
    }

    static FrameCheck noOptions() {
        return f -> f.tcp().optionsLength() == 0 ? null : "options present";
    }

    static FrameCheck checksumValid() {
        return f -> f.checksumOk() ? null : "bad checksum";
    }
}
