package dev.tern.lab.link;

/**
 * How a bottleneck queue decides which frames wait, leave, are dropped or marked. The bottleneck hands every frame
 * that survived the random loss to {@link #enqueue} and asks {@link #dequeue} each time the link is free. Both run
 * per frame: no allocation. A discipline that drops a frame releases its slot and counts the cause in the
 * {@link BottleneckStats} it was built with.
 */
public interface QueueDiscipline {
    /** Queues {@code slot} (its length and flow are set) at {@code nowNs}; false when it was dropped instead. */
    boolean enqueue(int slot, long nowNs);

    /** The frame to send at {@code nowNs}, or -1 when none is left. */
    int dequeue(long nowNs);

    int packets();

    long bytes();
}
