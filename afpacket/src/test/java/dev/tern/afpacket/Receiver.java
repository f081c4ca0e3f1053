package dev.tern.afpacket;

import dev.tern.ethernet.link.FrameHandler;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Test-side receiving: copies frames out of a link's ring (tests may allocate) and waits for one that matches. */
final class Receiver implements FrameHandler {
    /** A received frame, copied, with its {@code Offloads} RX flags. */
    record Frame(byte[] bytes, int flags) {
        int length() {
            return bytes.length;
        }
    }

    private final AfPacketLink link;
    private final List<Frame> frames = new ArrayList<>();

    Receiver(AfPacketLink link) {
        this.link = link;
    }

    @Override
    public void onFrame(MemorySegment segment, long offset, int length, int flags) {
        frames.add(new Frame(segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE), flags));
    }

    /** Every frame received so far (including ones already returned by {@link #await}). */
    List<Frame> frames() {
        return frames;
    }

    /** Receives until a frame matching {@code match} arrives (after the ones already seen) or fails after {@code timeout}. */
    Frame await(Predicate<Frame> match, Duration timeout, String what) {
        final long deadline = System.nanoTime() + timeout.toNanos();
        int checked = 0;
        while (true) {
            for (; checked < frames.size(); checked++) {
                if (match.test(frames.get(checked))) {
                    return frames.get(checked);
                }
            }
            if (deadline - System.nanoTime() < 0) {
                throw new AssertionError("no " + what + " within " + timeout + " on " + link.name() + "; received "
                    + frames.size() + " other frames");
            }
            link.awaitFrames(10);
            link.receive(this, 256);
        }
    }

    /** Receives for {@code duration} and returns every frame that matches. */
    List<Frame> collect(Predicate<Frame> match, Duration duration) {
        final int start = frames.size();
        final long deadline = System.nanoTime() + duration.toNanos();
        while (deadline - System.nanoTime() > 0) {
            link.awaitFrames(10);
            link.receive(this, 256);
        }
        final List<Frame> matching = new ArrayList<>();
        for (Frame frame : frames.subList(start, frames.size())) {
            if (match.test(frame)) {
                matching.add(frame);
            }
        }
        return matching;
    }
}
