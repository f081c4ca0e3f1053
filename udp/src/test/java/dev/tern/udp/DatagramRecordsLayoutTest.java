package dev.tern.udp;

import dev.tern.core.testing.OffHeapLayout;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The per-datagram record header in the socket rings keeps a sound layout (see OffHeapLayout). */
class DatagramRecordsLayoutTest {
    @Test
    void recordHeaderFieldsAreDisjointAlignedAndInsideTheHeader() {
        final List<OffHeapLayout.Slot> fields = OffHeapLayout.fields(DatagramRecords.class, name -> true);
        assertEquals(7, fields.size(), fields::toString);
        assertEquals(List.of(), OffHeapLayout.problems(fields, DatagramRecords.HEADER_IPV6));
    }
}
