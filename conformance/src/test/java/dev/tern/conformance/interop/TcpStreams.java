package dev.tern.conformance.interop;

import dev.tern.stack.TcpConnection;
import dev.tern.stack.TernSocketException;

import java.lang.foreign.MemorySegment;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * Moves a bounded number of bytes through a Tern {@link TcpConnection} and hashes them (SHA-256), for comparison with
 * the hash the kernel's side printed. The bytes sent are slices of a 8 MiB random block at varying offsets: cheap to
 * make, and no period a misplaced segment could hide in.
 *
 * <p>Every loop is bounded in bytes and by a deadline; on the stack's owner thread the waiting calls poll the stack.
 */
final class TcpStreams {
    private static final int BLOCK = 8 << 20;
    private static final int CHUNK = 1 << 20;
    private static final byte[] RANDOM = new byte[BLOCK];

    static {
        new SplittableRandom(0x7E57_5EEDL).nextBytes(RANDOM);
    }

    private TcpStreams() {
    }

    /** How many bytes went, their SHA-256, and how long it took. */
    record Result(long bytes, String sha256, long nanos) {
        double gbitPerSecond() {
            return bytes * 8.0 / nanos;
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Writes {@code length} bytes to {@code connection} (waiting for room, at most until {@code deadlineNs}); fails if
     * they do not all go in time.
     */
    static Result send(TcpConnection connection, long length, long deadlineNs) throws TernSocketException {
        final MessageDigest digest = sha256();
        final MemorySegment random = MemorySegment.ofArray(RANDOM);
        final long started = System.nanoTime();
        long sent = 0;
        for (int index = 0; sent < length; index++) {
            final int offset = (int) ((index * 1_000_003L) % (BLOCK - CHUNK));
            final int chunk = (int) Math.min(CHUNK, length - sent);
            final long left = deadlineNs - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("sent only " + sent + " of " + length + " bytes before the deadline");
            }
            final int written = connection.write(random, offset, chunk, left);
            digest.update(RANDOM, offset, written);
            sent += written;
            if (written < chunk) {
                throw new AssertionError("sent only " + sent + " of " + length + " bytes before the deadline");
            }
        }
        return new Result(sent, HexFormat.of().formatHex(digest.digest()), System.nanoTime() - started);
    }

    /**
     * Like {@link #send}, with the non-blocking {@code write}: when the send ring is full, {@code idle} runs (poll the
     * stack when this thread owns it). For a connection the peer has half-closed, where the blocking write spins (see
     * {@code TcpInteropTest.blockingWriteAfterThePeersFinReturnsAtItsTimeout}).
     */
    static Result sendPolling(TcpConnection connection, long length, long deadlineNs, Runnable idle) throws TernSocketException {
        final MessageDigest digest = sha256();
        final MemorySegment random = MemorySegment.ofArray(RANDOM);
        final long started = System.nanoTime();
        long sent = 0;
        int index = 0;
        int offset = 0;
        int chunkLeft = 0;
        while (sent < length) {
            if (System.nanoTime() - deadlineNs > 0) {
                throw new AssertionError("sent only " + sent + " of " + length + " bytes before the deadline");
            }
            if (chunkLeft == 0) {
                offset = (int) ((index++ * 1_000_003L) % (BLOCK - CHUNK));
                chunkLeft = (int) Math.min(CHUNK, length - sent);
            }
            final int written = connection.write(random, offset, chunkLeft);
            if (written == 0) {
                idle.run();
                continue;
            }
            digest.update(RANDOM, offset, written);
            offset += written;
            chunkLeft -= written;
            sent += written;
        }
        return new Result(sent, HexFormat.of().formatHex(digest.digest()), System.nanoTime() - started);
    }

    /**
     * Reads until the end of the stream (or {@code limit} bytes, or {@code deadlineNs}: then it fails) and hashes what
     * came.
     */
    static Result receive(TcpConnection connection, long limit, long deadlineNs) throws TernSocketException {
        final MessageDigest digest = sha256();
        final byte[] buffer = new byte[CHUNK];
        final MemorySegment segment = MemorySegment.ofArray(buffer);
        final long started = System.nanoTime();
        long received = 0;
        while (true) {
            final long left = deadlineNs - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("received " + received + " bytes and no end of stream before the deadline");
            }
            final int n = connection.read(segment, 0, buffer.length, left);
            if (n < 0) {
                return new Result(received, HexFormat.of().formatHex(digest.digest()), System.nanoTime() - started);
            }
            digest.update(buffer, 0, n);
            received += n;
            if (received > limit) {
                throw new AssertionError("received more than the " + limit + " bytes expected");
            }
        }
    }
}
