package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Fixed byte vectors of Confluent's documented Protobuf framing, written down by hand. */
class ConfluentFramingTest {
  private static byte[] hex(String s) {
    return HexFormat.of().parseHex(s.replace(" ", ""));
  }

  @Test
  void fixedVectors() {
    byte[] payload = hex("0a 01 61"); // field 1 = "a"
    // [0] is the single byte 0.
    assertArrayEquals(hex("00 00000001 00 0a0161"), ConfluentFraming.frame(1, List.of(0), payload));
    assertArrayEquals(hex("00 00000001 00 0a0161"), ConfluentFraming.frame(1, List.of(), payload));
    // [1]: count 1 and index 1, each zig-zag (2).
    assertArrayEquals(hex("00 00000102 02 02 0a0161"), ConfluentFraming.frame(258, List.of(1), payload));
    // [0, 2]: count 2 (4), 0 (0), 2 (4); the id's four bytes big-endian.
    assertArrayEquals(hex("00 7fffffff 04 00 04 0a0161"), ConfluentFraming.frame(Integer.MAX_VALUE, List.of(0, 2),
        payload));
    // [64]: zig-zag 128 is the two-byte varint 80 01.
    assertArrayEquals(hex("00 0000000a 02 8001 0a0161"), ConfluentFraming.frame(10, List.of(64), payload));
  }

  @Test
  void parseReadsTheVectorsBack() {
    assertEquals(new ConfluentFraming.Frame(1, List.of(0), hex("0a0161")),
        ConfluentFraming.parse(hex("00 00000001 00 0a0161")));
    assertEquals(new ConfluentFraming.Frame(Integer.MAX_VALUE, List.of(0, 2), hex("0a0161")),
        ConfluentFraming.parse(hex("00 7fffffff 04 00 04 0a0161")));
    assertEquals(new ConfluentFraming.Frame(10, List.of(64), hex("")),
        ConfluentFraming.parse(hex("00 0000000a 02 8001")));
  }

  @Test
  void parseRefusesWhatIsNotAFrame() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ConfluentFraming.parse(hex("01 00000001 00 0a")))
        .getMessage().contains("magic byte 1"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ConfluentFraming.parse(hex("00 000001")))
        .getMessage().contains("too few"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ConfluentFraming.parse(hex("00 00000001 03 00")))
        .getMessage().contains("count -2"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ConfluentFraming.parse(hex("00 00000001 02 80")))
        .getMessage().contains("runs past"));
  }
}
