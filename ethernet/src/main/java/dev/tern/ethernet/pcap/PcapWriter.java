package dev.tern.ethernet.pcap;

import dev.tern.core.io.FileErrors;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes Ethernet frames with nanosecond timestamps to a pcap file, readable by tcpdump, tshark, Wireshark and libpcap.
 * Plain Java: the format is two small headers, so no native library is needed to write it (reading captures, in
 * conformance, still goes through libpcap). Several taps may share one writer; writes are serialised.
 *
 * <pre>
 *  file:   global header (24 bytes), then one record header (16 bytes) + frame bytes per frame; host byte order,
 *          which readers detect from the magic number
 *
 *    0          4     6     8          12         16         20         24
 *    +----------+-----+-----+----------+----------+----------+----------+
 *    | a1b23c4d |  2  |  4  | thiszone | sigfigs  | snaplen  | linktype |   magic: nanosecond timestamps;
 *    +----------+-----+-----+----------+----------+----------+----------+   linktype 1: LINKTYPE_ETHERNET
 *
 *    0          4          8          12         16
 *    +----------+----------+----------+----------+-----------------
 *    |  ts_sec  | ts_nsec  | incl_len | orig_len | frame bytes (incl_len) ...
 *    +----------+----------+----------+----------+-----------------
 * </pre>
 *
 * <p>A frame longer than {@link #SNAPLEN} is cut there (incl_len &lt; orig_len), as libpcap does. A debugging and
 * testing aid, not a data path: frames are copied through one reusable buffer under a lock.
 */
public final class PcapWriter implements AutoCloseable {
    /** The most bytes of one frame a record holds (libpcap's default for Ethernet). */
    public static final int SNAPLEN = 262_144;
    /** pcap magic number for nanosecond-resolution timestamps (libpcap's NSEC_TCPDUMP_MAGIC). */
    public static final int MAGIC_NANOSECONDS = 0xa1b2_3c4d;
    /** LINKTYPE_ETHERNET: records start with an Ethernet II header. */
    public static final int LINKTYPE_ETHERNET = 1;
    static final int GLOBAL_HEADER_LENGTH = 24;
    static final int RECORD_HEADER_LENGTH = 16;

    private final Path path;
    private final OutputStream out;
    private final ByteBuffer header = ByteBuffer.allocate(GLOBAL_HEADER_LENGTH).order(ByteOrder.nativeOrder());
    private byte[] frame = new byte[2048];
    private long frames;
    private boolean closed;

    private PcapWriter(Path path, OutputStream out) {
        this.path = path;
        this.out = out;
    }

    /** Creates (or truncates) {@code path} and writes the global header; fails with one clear message. */
    public static PcapWriter create(Path path) {
        try {
            final PcapWriter writer = new PcapWriter(path, new BufferedOutputStream(Files.newOutputStream(path), 1 << 16));
            writer.writeGlobalHeader();
            return writer;
        } catch (IOException e) {
            throw new IllegalStateException("cannot write pcap file " + path + ": " + FileErrors.reason(e), e);
        }
    }

    public Path path() {
        return path;
    }

    /** Appends one frame captured at {@code epochNanos} (nanoseconds since the Unix epoch). */
    public synchronized void write(MemorySegment segment, long offset, int length, long epochNanos) {
        if (closed) {
            throw new IllegalStateException("pcap file " + path + " already closed");
        }
        final int captured = Math.min(length, SNAPLEN);
        if (frame.length < captured) {
            frame = new byte[Math.max(captured, frame.length * 2)];
        }
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, frame, 0, captured);
        header.clear();
        header.putInt((int) Math.floorDiv(epochNanos, 1_000_000_000L))
            .putInt((int) Math.floorMod(epochNanos, 1_000_000_000L))
            .putInt(captured)
            .putInt(length);
        try {
            out.write(header.array(), 0, RECORD_HEADER_LENGTH);
            out.write(frame, 0, captured);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write pcap file " + path, e);
        }
        frames++;
    }

    public synchronized long frames() {
        return frames;
    }

    public synchronized void flush() {
        if (closed) {
            return;
        }
        try {
            out.flush();
        } catch (IOException e) {
            throw new IllegalStateException("cannot flush pcap file " + path + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close pcap file " + path, e);
        }
    }

    private void writeGlobalHeader() throws IOException {
        header.clear();
        header.putInt(MAGIC_NANOSECONDS)
            .putShort((short) 2)
            .putShort((short) 4)
            .putInt(0)
            .putInt(0)
            .putInt(SNAPLEN)
            .putInt(LINKTYPE_ETHERNET);
        out.write(header.array(), 0, GLOBAL_HEADER_LENGTH);
    }
}
