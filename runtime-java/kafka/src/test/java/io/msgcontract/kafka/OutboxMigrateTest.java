package io.msgcontract.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.msgcontract.support.Ddl;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Outbox.migrate creates what contracts/sql/sqlite.sql's outbox sections say (runtime-java's DdlTest checks the file). */
class OutboxMigrateTest {
  @Test
  void migrateRunsTheFilesOutboxSections() throws SQLException {
    try (Connection runtime = DriverManager.getConnection("jdbc:sqlite::memory:");
        Connection file = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      Outbox.migrate(runtime, Outbox.Dialect.SQLITE);
      Outbox.migrate(runtime, Outbox.Dialect.SQLITE); // again: a no-op
      try (Statement st = file.createStatement()) {
        for (String s : Ddl.statements(Ddl.SQLITE, "msg_outbox", "msg_outbox_lock")) {
          st.execute(s);
        }
      }
      List<String> got = schema(runtime);
      assertEquals(schema(file), got);
      assertEquals(List.of("index msg_outbox_pending", "table msg_outbox", "table msg_outbox_lock"),
          got.stream().filter(l -> !l.startsWith("  ")).toList());
    }
  }

  /** The schema's tables and indexes with their statements' text, each table's columns, and the lock rows. */
  private static List<String> schema(Connection c) throws SQLException {
    List<String> out = new ArrayList<>();
    List<String> tables = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT type, name, sql FROM sqlite_master "
            + "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")) {
      while (rs.next()) {
        out.add(rs.getString(1) + " " + rs.getString(2));
        out.add("  " + rs.getString(3));
        if (rs.getString(1).equals("table")) {
          tables.add(rs.getString(2));
        }
      }
    }
    for (String t : tables) {
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('" + t + "')")) {
        while (rs.next()) {
          out.add("  " + t + "." + rs.getString(1) + " " + rs.getString(2) + " " + rs.getInt(3) + " " + rs.getString(4) + " " + rs.getInt(5));
        }
      }
    }
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT name, owner, lease_until FROM msg_outbox_lock")) {
      while (rs.next()) {
        out.add("  lock " + rs.getString(1) + " '" + rs.getString(2) + "' " + rs.getLong(3));
      }
    }
    return out;
  }
}
