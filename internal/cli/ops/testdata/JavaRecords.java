package io.msgcontract.proof;

import com.example.shop.inventory.v1.InventoryContract;
import com.example.shop.inventory.v1.StockDeducted;
import com.example.shop.proof.v1.ProofContract;
import com.example.shop.proof.v1.StockPaid;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.msgcontract.support.BizKeyException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.EventSpec;
import io.msgcontract.v1.Envelope;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Builds records with msgcontract's Java runtime, as a Java producer would.
 * Run by internal/cli/ops TestConfluentRuleExecution: each stdin line is
 * "GROUP TAB PAYLOAD-JSON" (group 0 StockDeducted of examples' inventory
 * contract, group 1 StockPaid of the test's proof contract); each stdout line
 * "pass PAYLOAD" when Envelopes.newEnvelope wraps the record, "fail CODE
 * PAYLOAD" when it refuses it with a BizKeyException, PAYLOAD the base64
 * payload bytes (for a refused record the message's encoding, what the
 * envelope would have carried).
 */
public final class JavaRecords {
  private JavaRecords() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    StringBuilder out = new StringBuilder();
    JsonFormat.Parser parser = JsonFormat.parser();
    for (String line; (line = in.readLine()) != null; ) {
      int tab = line.indexOf('\t');
      String group = line.substring(0, tab);
      String json = line.substring(tab + 1);
      if (group.equals("0")) {
        StockDeducted.Builder b = StockDeducted.newBuilder();
        parser.merge(json, b);
        out.append(record(InventoryContract.StockDeducted.SPEC, b.build())).append('\n');
      } else {
        StockPaid.Builder b = StockPaid.newBuilder();
        parser.merge(json, b);
        out.append(record(ProofContract.StockPaid.SPEC, b.build())).append('\n');
      }
    }
    System.out.print(out);
  }

  private static <M extends Message> String record(EventSpec<M> spec, M m) {
    Base64.Encoder b64 = Base64.getEncoder();
    try {
      Envelope env = Envelopes.newEnvelope(spec, m, 0L);
      if (!env.getContentType().equals(Envelopes.CONTENT_TYPE_PROTO)) {
        throw new IllegalStateException("not a binary payload: " + env.getContentType());
      }
      return "pass " + b64.encodeToString(env.getPayload().toByteArray());
    } catch (BizKeyException e) {
      return "fail " + e.code() + " " + b64.encodeToString(m.toByteArray());
    }
  }
}
