package dev.tern.ethernet.pcap;

import org.pcap4j.core.NotOpenException;
import org.pcap4j.core.PcapDumper;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.PcapNativeException;
import org.pcap4j.core.Pcaps;
import org.pcap4j.packet.namednumber.DataLinkType;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.sql.Timestamp;

/**
 * Writes Ethernet frames with nanosecond timestamps to a pcap file through pcap4j (libpcap), readable by tshark and
 * Wireshark. Several taps may share one writer; writes are serialised.
 *
 * <p>A debugging and testing aid, not a data path: each frame is copied to a fresh array, because that is what
 * pcap4j's {@code dumpRaw} takes.
 */
public final class PcapWriter implements AutoCloseable {
    private static final int SNAPLEN = 262_144;

    private final Path path;
    private final PcapHandle handle;
    private final PcapDumper dumper;
    private long frames;

    private PcapWriter(Path path, PcapHandle handle, PcapDumper dumper) {
        this.path = path;
        this.handle = handle;
        this.dumper = dumper;
    }

    /** Creates (or truncates) {@code path}; fails with one clear message when libpcap is missing. */
    public static PcapWriter create(Path path) {
        try {
            final PcapHandle handle = Pcaps.openDead(DataLinkType.EN10MB, SNAPLEN, PcapHandle.TimestampPrecision.NANO);
            return new PcapWriter(path, handle, handle.dumpOpen(path.toString()));
        } catch (PcapNativeException | NotOpenException e) {
            throw new IllegalStateException("cannot write pcap file " + path + ": " + e.getMessage(), e);
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            throw new IllegalStateException("writing pcap files needs libpcap (Debian package libpcap0.8): " + e.getMessage(), e);
        }
    }

    public Path path() {
        return path;
    }

    /** Appends one frame captured at {@code epochNanos} (nanoseconds since the Unix epoch). */
    public synchronized void write(MemorySegment segment, long offset, int length, long epochNanos) {
        final byte[] frame = new byte[length];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, frame, 0, length);
        final Timestamp timestamp = new Timestamp(Math.floorDiv(epochNanos, 1_000_000L));
        timestamp.setNanos((int) Math.floorMod(epochNanos, 1_000_000_000L));
        try {
            dumper.dumpRaw(frame, timestamp);
            frames++;
        } catch (NotOpenException e) {
            throw new IllegalStateException("pcap file " + path + " already closed", e);
        }
    }

    public synchronized long frames() {
        return frames;
    }

    public synchronized void flush() {
        try {
            dumper.flush();
        } catch (PcapNativeException | NotOpenException e) {
            throw new IllegalStateException("cannot flush pcap file " + path + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        if (dumper.isOpen()) {
            dumper.close();
        }
        if (handle.isOpen()) {
            handle.close();
        }
    }
}
