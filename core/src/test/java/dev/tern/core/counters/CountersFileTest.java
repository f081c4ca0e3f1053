package dev.tern.core.counters;

import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CountersFileTest {
    @TempDir
    Path directory;

    @Test
    void anotherReaderSeesCountersOfARunningStack() throws Exception {
        try (CountersFile counters = CountersFile.create(directory, "demo a", 64)) {
            final AtomicCounter frames = counters.counter("ethernet.rx.frames");
            final AtomicCounter drops = counters.counter("ethernet.drop.too_short");
            for (int i = 0; i < 5; i++) {
                frames.incrementRelease();
            }
            drops.incrementRelease();

            final List<CountersSnapshot> all = CountersSnapshot.readAll(directory);
            assertEquals(1, all.size());
            final CountersSnapshot snapshot = all.getFirst();
            assertEquals("demo a", snapshot.name());
            assertEquals(ProcessHandle.current().pid(), snapshot.pid());
            assertTrue(snapshot.alive());
            assertEquals(5L, snapshot.counters().get("ethernet.rx.frames"));
            assertEquals(1L, snapshot.counters().get("ethernet.drop.too_short"));
            assertTrue(snapshot.file().getFileName().toString().startsWith("demo_a-"));
        }
        assertTrue(CountersSnapshot.readAll(directory).isEmpty(), "file removed on close");
    }

    @Test
    void aFileThatIsNotACountersFileIsIgnored() throws Exception {
        final Path junk = directory.resolve("junk" + CountersFile.SUFFIX);
        Files.write(junk, new byte[300]);
        assertNull(CountersSnapshot.read(junk));
        assertTrue(CountersSnapshot.readAll(directory).isEmpty());
    }

    @Test
    void inMemoryCountersPublishNothing() throws Exception {
        try (CountersFile counters = CountersFile.inMemory("test", 8)) {
            counters.counter("x").incrementRelease();
            assertNull(counters.path());
            assertEquals(1, counters.reader().getCounterValue(0));
            assertFalse(Files.list(directory).findAny().isPresent());
        }
    }
}
