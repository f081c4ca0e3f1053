package dev.tern.lab;

import dev.tern.ethernet.pcap.PcapWriter;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * One pcap file per flow, written at the router: each data frame as it finishes leaving the bottleneck link (after
 * the queue, so drops are missing and CE marks show), and each frame of the way back as the router sends it on to
 * the sender (after the reverse delay). Timestamps are the run's virtual time from 0, in nanoseconds; within a
 * file they never go back, since the router writes a poll's departures (at most now) before its sends (at now).
 * Frames of no flow (broadcasts to no sender) are not written. Optional: the router runs without one.
 */
final class FlowCapture implements AutoCloseable {
    private final PcapWriter[] writers;

    /** Creates {@code DIR/NAME-flowN.pcap} for each of {@code flows} flows; fails with one clear message. */
    FlowCapture(Path directory, String scenario, int flows) {
        this.writers = new PcapWriter[flows];
        try {
            for (int i = 0; i < flows; i++) {
                writers[i] = PcapWriter.create(directory.resolve(fileName(scenario, i)));
            }
        } catch (IllegalStateException e) {
            close();
            throw e;
        }
    }

    static String fileName(String scenario, int flow) {
        return scenario.replaceAll("[^A-Za-z0-9._-]", "_") + "-flow" + flow + ".pcap";
    }

    void frame(int flow, MemorySegment slab, long offset, int length, long nowNs) {
        if (flow < writers.length) {
            writers[flow].write(slab, offset, length, nowNs);
        }
    }

    @Override
    public void close() {
        for (PcapWriter writer : writers) {
            if (writer != null) {
                writer.close();
            }
        }
    }
}
