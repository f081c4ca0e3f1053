package dev.tern.conformance.replay;

import org.pcap4j.core.NotOpenException;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.PcapNativeException;
import org.pcap4j.core.Pcaps;
import org.pcap4j.packet.namednumber.DataLinkType;

import java.io.EOFException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeoutException;

/**
 * The frames of one pcap file (Ethernet link type), read whole through libpcap (pcap4j), with nanosecond
 * timestamps. Captures in {@code pcaps/} are small (under 100 KB), so holding them in memory is fine.
 */
public final class Capture {
    private final Path path;
    private final List<CapturedFrame> frames;

    private Capture(Path path, List<CapturedFrame> frames) {
        this.path = path;
        this.frames = List.copyOf(frames);
    }

    /** A capture made of {@code frames} (already in time order); for tests that build one by hand. */
    public static Capture of(Path path, List<CapturedFrame> frames) {
        return new Capture(path, frames);
    }

    /** Reads every frame of {@code file}; fails with one line when the file is missing, not a pcap, or not Ethernet. */
    public static Capture read(Path file) {
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no capture file " + file);
        }
        final PcapHandle handle;
        try {
            handle = Pcaps.openOffline(file.toString(), PcapHandle.TimestampPrecision.NANO);
        } catch (PcapNativeException e) {
            throw new IllegalArgumentException("cannot read capture " + file + ": " + e.getMessage(), e);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            throw new IllegalStateException("reading pcap files needs libpcap (Debian package libpcap0.8): " + e.getMessage(), e);
        }
        try {
            if (!DataLinkType.EN10MB.equals(handle.getDlt())) {
                throw new IllegalArgumentException("capture " + file + " has link type " + handle.getDlt() + ", not Ethernet");
            }
            final List<CapturedFrame> frames = new ArrayList<>();
            while (true) {
                final byte[] bytes;
                try {
                    bytes = handle.getNextRawPacketEx();
                } catch (EOFException end) {
                    break;
                } catch (TimeoutException e) {
                    continue;
                }
                final Timestamp timestamp = handle.getTimestamp();
                final long epochNs = Math.floorDiv(timestamp.getTime(), 1000L) * 1_000_000_000L + timestamp.getNanos();
                if (handle.getOriginalLength() != null && handle.getOriginalLength() != bytes.length) {
                    throw new IllegalArgumentException("capture " + file + " frame " + (frames.size() + 1) + " was cut to "
                        + bytes.length + " of " + handle.getOriginalLength() + " bytes (capture with -s 0)");
                }
                frames.add(new CapturedFrame(epochNs, bytes));
            }
            return new Capture(file, frames);
        } catch (PcapNativeException | NotOpenException e) {
            throw new IllegalArgumentException("cannot read capture " + file + ": " + e.getMessage(), e);
        } finally {
            handle.close();
        }
    }

    public Path path() {
        return path;
    }

    public List<CapturedFrame> frames() {
        return frames;
    }

    /** Timestamp of the first frame. */
    public long startNs() {
        return frames.isEmpty() ? 0 : frames.getFirst().timestampNs();
    }

    /** Timestamp of the last frame. */
    public long endNs() {
        return frames.isEmpty() ? 0 : frames.getLast().timestampNs();
    }

    /** Frames whose source MAC is {@code mac}. */
    public List<CapturedFrame> sentBy(long mac) {
        return frames.stream().filter(f -> f.length() >= 14 && f.source() == mac).toList();
    }

    /** Frames whose source MAC is not {@code mac}. */
    public List<CapturedFrame> notSentBy(long mac) {
        return frames.stream().filter(f -> f.length() >= 14 && f.source() != mac).toList();
    }

    /** The MAC that ARP packets in the capture give for {@code ipv4} (the sender hardware address), if any. */
    public OptionalLong macOf(int ipv4) {
        for (CapturedFrame frame : frames) {
            if (frame.isArp() && frame.arpSenderIp() == ipv4) {
                return OptionalLong.of(frame.u48(14 + 8));
            }
        }
        return OptionalLong.empty();
    }

    @Override
    public String toString() {
        return "capture " + path + " (" + frames.size() + " frames)";
    }
}
