package io.msgcontract.kafka;

import io.msgcontract.support.Json;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A Confluent-compatible schema registry client with the two lookups the
 * wire format needs, both cached for the life of the client (ids are
 * immutable): a subject version's id (producers; they never register, like
 * runtime-go's and runtime-python's) and the subject versions that hold
 * an id (consumers). Safe for concurrent use.
 */
public final class SchemaRegistry {
  /** The registry turned the request down (HTTP 4xx) or the id is not the subject's: the record is at fault. */
  public static final class RefusedException extends KafkaRuntimeException {
    private static final long serialVersionUID = 1L;

    RefusedException(String message) {
      super(message, null);
    }
  }

  /** The registry could not be asked (network, HTTP 5xx): worth another try. */
  public static final class UnavailableException extends KafkaRuntimeException {
    private static final long serialVersionUID = 1L;

    UnavailableException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final String base;
  private final HttpClient http;
  private final Duration timeout;
  private final Map<String, Integer> ids = new ConcurrentHashMap<>();
  private final Map<Integer, List<SubjectVersion>> versions = new ConcurrentHashMap<>();
  private final AtomicBoolean noVersionLogged = new AtomicBoolean();
  private static final Logger LOG = Logger.getLogger(SchemaRegistry.class.getName());

  /** A subject's version that holds a schema id, as {@code GET /schemas/ids/{id}/versions} lists them. */
  public record SubjectVersion(String subject, int version) {}

  /**
   * Returns a client of the registry at baseUrl.
   *
   * @param baseUrl http(s) URL of the registry, e.g. the address of `msgcontract registry serve`
   * @param timeout bound of one request
   */
  public SchemaRegistry(String baseUrl, Duration timeout) {
    this.base = baseUrl.replaceAll("/+$", "");
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /** The id of subject's version (0 or less: its latest version). */
  public int id(String subject, int version) {
    String v = version > 0 ? Integer.toString(version) : "latest";
    String k = subject + "\0" + v;
    Integer id = ids.get(k);
    if (id != null) {
      return id;
    }
    Object o = get("/subjects/" + URLEncoder.encode(subject, StandardCharsets.UTF_8).replace("+", "%20")
        + "/versions/" + v, "id of " + subject + " version " + v);
    if (!(o instanceof Map<?, ?> m) || !(m.get("id") instanceof Long n)) {
      throw new UnavailableException("confluent: id of " + subject + " version " + v + ": no id in the answer", null);
    }
    ids.put(k, n.intValue());
    return n.intValue();
  }

  /**
   * The subject versions that hold schema id (version 0: the answer names none), cached: an id never
   * changes its schema.
   */
  public List<SubjectVersion> versions(int id) {
    List<SubjectVersion> s = versions.get(id);
    if (s != null) {
      return s;
    }
    Object o = get("/schemas/ids/" + id + "/versions", "subjects of schema id " + id);
    List<SubjectVersion> out = new ArrayList<>();
    if (o instanceof List<?> l) {
      for (Object x : l) {
        if (x instanceof Map<?, ?> m && m.get("subject") instanceof String sub) {
          out.add(new SubjectVersion(sub, m.get("version") instanceof Long v ? v.intValue() : 0));
        }
      }
    }
    out = List.copyOf(out);
    versions.put(id, out);
    return out;
  }

  /** The subjects that hold schema id. */
  public List<String> subjects(int id) {
    List<String> out = new ArrayList<>();
    for (SubjectVersion v : versions(id)) {
      if (!out.contains(v.subject())) {
        out.add(v.subject());
      }
    }
    return List.copyOf(out);
  }

  /**
   * Checks that id belongs to subject.
   *
   * @return subject's version that holds id; 0 when the registry's answer names none (logged once)
   * @throws RefusedException when it does not, or the registry refuses the id
   * @throws UnavailableException when the registry cannot be asked
   */
  public int checkSubject(int id, String subject) {
    boolean found = false;
    int version = 0;
    for (SubjectVersion v : versions(id)) {
      if (v.subject().equals(subject)) {
        // An id is held by one version of a subject unless it was registered again after a deletion; any
        // of them is the same schema, and the newest is taken (as in Go and Python).
        found = true;
        version = Math.max(version, v.version());
      }
    }
    if (!found) {
      throw new RefusedException("schema registry refused: schema id " + id + " belongs to " + subjects(id)
          + ", not to the event's subject " + subject);
    }
    if (version == 0 && noVersionLogged.compareAndSet(false, true)) {
      LOG.log(Level.WARNING, "msgcontract: the schema registry names no version for schema id " + id + " of "
          + subject + "; envelopes that name none keep schema_version 0");
    }
    return version;
  }

  private Object get(String path, String what) {
    HttpRequest req = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
        .header("Accept", "application/vnd.schemaregistry.v1+json").GET().build();
    HttpResponse<String> resp;
    try {
      resp = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UnavailableException("confluent: " + what + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableException("confluent: " + what + ": interrupted", e);
    }
    int st = resp.statusCode();
    if (st >= 400 && st < 500) {
      throw new RefusedException("confluent: " + what + ": schema registry refused: HTTP " + st + ": "
          + resp.body().strip());
    }
    if (st != 200) {
      throw new UnavailableException("confluent: " + what + ": HTTP " + st + ": " + resp.body().strip(), null);
    }
    try {
      return Json.parse(resp.body());
    } catch (IllegalArgumentException e) {
      throw new UnavailableException("confluent: " + what + ": " + e.getMessage(), e);
    }
  }
}
