package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The DDL comes from contracts/sql: the jar's copy is the file, and DedupStore.migrate and TxCheck.migrate create what
 * it says.
 */
class DdlTest {
  private static final List<String> TABLES =
      List.of("msg_dedup", "msg_dedup_conflict", "msg_dedup_chain", "msg_outbox", "msg_outbox_lock",
          "msg_tx_check");

  @Test
  void parseSplitsSectionsAndStatements() {
    List<Ddl.Section> secs = Ddl.parse("-- a comment\n\n-- table: a\n-- about a\nCREATE TABLE a (\n  x TEXT);\n"
        + "CREATE INDEX i\n  ON a (x);\n-- table: b\nINSERT INTO b VALUES (1);\n");
    assertEquals(List.of(new Ddl.Section("a", List.of("CREATE TABLE a ( x TEXT)", "CREATE INDEX i ON a (x)")),
        new Ddl.Section("b", List.of("INSERT INTO b VALUES (1)"))), secs);
    for (String bad : List.of("CREATE TABLE a (x TEXT);\n", "-- table: a\nCREATE TABLE a (x TEXT)\n",
        "-- table: a\nCREATE TABLE a (\n-- table: b\n")) {
      assertThrows(IllegalArgumentException.class, () -> Ddl.parse(bad), bad);
    }
  }

  /** The repository's contracts/sql, found from the working directory up (the module may move). */
  static Path contractsSql() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      Path p = d.resolve("contracts").resolve("sql");
      if (Files.isRegularFile(p.resolve("sqlite.sql"))) {
        return p;
      }
    }
    throw new AssertionError("no contracts/sql above " + Path.of("").toAbsolutePath());
  }

  @Test
  void theJarHoldsTheFilesWithEveryTable() throws IOException {
    for (String d : List.of(Ddl.SQLITE, Ddl.POSTGRES, Ddl.MYSQL)) {
      String want = Files.readString(contractsSql().resolve(d + ".sql"));
      try (InputStream in = Ddl.class.getResourceAsStream("/io/msgcontract/sql/" + d + ".sql")) {
        assertEquals(want, new String(in.readAllBytes(), StandardCharsets.UTF_8), d);
      }
      List<String> tables = new ArrayList<>(TABLES);
      if (d.equals(Ddl.SQLITE)) {
        tables.addAll(List.of("mc_queue", "mc_subscriptions", "mc_dead_letter")); // the embedded transport's, SQLite only
      }
      assertEquals(tables, Ddl.file(d).stream().map(Ddl.Section::table).toList(), d);
      String all = String.join("\n", Ddl.statements(d, TABLES.toArray(String[]::new)));
      assertFalse(all.contains("{{"), all);
      assertTrue(all.contains("CREATE TABLE IF NOT EXISTS msg_dedup ("), all);
    }
    assertThrows(IllegalArgumentException.class, () -> Ddl.statements(Ddl.SQLITE, "no_such_table"));
  }

  /**
   * DedupStore.migrate and TxCheck.migrate create exactly the file's msg_dedup, msg_dedup_chain and msg_tx_check
   * sections, nothing else.
   */
  @Test
  void migrateCreatesWhatTheFileSays() throws SQLException {
    try (Connection runtime = DriverManager.getConnection("jdbc:sqlite::memory:");
        Connection file = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      DedupStore.migrate(runtime);
      DedupStore.migrate(runtime); // again: a no-op
      TxCheck.migrate(runtime, Ddl.SQLITE);
      TxCheck.migrate(runtime, Ddl.SQLITE);
      List<Ddl.Section> secs = Ddl.parse(readSqlite());
      try (Statement st = file.createStatement()) {
        for (Ddl.Section s : secs) {
          if (List.of("msg_dedup", "msg_dedup_chain", TxCheck.TABLE).contains(s.table())) {
            for (String stmt : s.statements()) {
              st.execute(stmt.replace("{{", "").replace("}}", ""));
            }
          }
        }
      }
      List<String> got = schema(runtime);
      assertEquals(schema(file), got);
      assertTrue(got.contains("table msg_dedup withoutRowid=true"), String.join("\n", got));
      assertTrue(got.contains("index msg_dedup_chain_updated_at on msg_dedup_chain (updated_at)"), String.join("\n", got));
      assertTrue(got.contains("index msg_tx_check_created_at on msg_tx_check (created_at)"), String.join("\n", got));
    }
  }

  private static String readSqlite() {
    try {
      return Files.readString(contractsSql().resolve("sqlite.sql"));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** Every table (columns, rowid) and index of a SQLite database, one line each, sorted. */
  static List<String> schema(Connection conn) throws SQLException {
    List<String> out = new ArrayList<>();
    List<String[]> objs = new ArrayList<>();
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")) {
      while (rs.next()) {
        objs.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)});
      }
    }
    for (String[] o : objs) {
      try (Statement st = conn.createStatement()) {
        if (o[0].equals("table")) {
          out.add("table " + o[1] + " withoutRowid=" + o[3].contains("WITHOUT ROWID"));
          try (ResultSet rs = st.executeQuery("SELECT cid, name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('" + o[1] + "')")) {
            while (rs.next()) {
              out.add("column " + o[1] + " " + rs.getInt(1) + " " + rs.getString(2) + " " + rs.getString(3) + " notnull="
                  + rs.getInt(4) + " default=" + rs.getString(5) + " pk=" + rs.getInt(6));
            }
          }
        } else if (o[0].equals("index")) {
          List<String> cols = new ArrayList<>();
          try (ResultSet rs = st.executeQuery("SELECT name FROM pragma_index_info('" + o[1] + "') ORDER BY seqno")) {
            while (rs.next()) {
              cols.add(rs.getString(1));
            }
          }
          out.add("index " + o[1] + " on " + o[2] + " (" + String.join(", ", cols) + ")");
        }
      }
    }
    Collections.sort(out);
    return out;
  }
}
