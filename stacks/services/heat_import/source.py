"""Reading a Heat 27 database: the rows of its stacks, as Heat stored them, read-only.

Heat stores its JSON columns as text (``heat.db.types.Json``) and, with
``encrypt_parameters_and_properties``, hidden parameters and resource
properties as ``[method, token]`` pairs; ``resource_data`` marked ``redact``
is always encrypted. ``decrypt`` reads the one method Heat 27 writes
(``cryptography_decrypt_v1``: a Fernet token under the first 32 characters of
``auth_encryption_key``, doubled when shorter) with the key the operator gives.
Nothing here writes to Heat's database: its connection is read-only.
"""
import base64
import json
from urllib.parse import unquote, urlsplit

import psycopg
from cryptography.fernet import Fernet, InvalidToken

# Heat 27's alembic revisions (heat/db/migrations/versions), oldest first. A database at
# a revision not here is a newer Heat's (or not Heat's): its rows may mean other things.
KNOWN_REVISIONS = ("c6214ca60943", "d2db381e3324", "88be64598c0f", "97b2a986f922")
HEAT_TABLES = ("stack", "raw_template", "resource", "event")


class SourceError(Exception):
    """The database cannot be read as Heat 27's (the message says why)."""


def connect(url):
    """A read-only DB-API connection to Heat's database at ``url`` (SQLAlchemy-style:
    ``postgresql[+driver]://user:pw@host:port/db`` or ``mysql[+driver]://...``)."""
    parts = urlsplit(url)
    scheme = parts.scheme.split("+")[0]
    if scheme in ("postgresql", "postgres"):
        conninfo = f"postgresql://{parts.netloc}{parts.path}"
        if parts.query:
            conninfo += f"?{parts.query}"
        try:
            conn = psycopg.connect(conninfo, connect_timeout=10)
        except psycopg.Error as error:
            raise SourceError(f"cannot connect to {_safe(url)}: {error}") from None
        conn.read_only = True
        return conn
    if scheme in ("mysql", "mariadb"):
        try:
            import pymysql  # optional: only a MariaDB/MySQL source needs it
        except ImportError:
            raise SourceError("reading a MariaDB/MySQL Heat database needs PyMySQL "
                              "(pip install PyMySQL)") from None
        try:
            conn = pymysql.connect(host=parts.hostname or "127.0.0.1", port=parts.port or 3306,
                                   user=unquote(parts.username or "root"),
                                   password=unquote(parts.password or ""),
                                   database=parts.path.lstrip("/"), charset="utf8mb4")
        except pymysql.Error as error:
            raise SourceError(f"cannot connect to {_safe(url)}: {error}") from None
        with conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION READ ONLY")
        return conn
    raise SourceError(f"unsupported database URL {_safe(url)}: give postgresql://... "
                      f"or mysql+pymysql://...")


def _safe(url):
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def decrypt(method, value, key):
    """The clear text of one value Heat encrypted (``crypt.encrypt``)."""
    if method is None or value is None:
        return None
    if method != "cryptography_decrypt_v1":
        raise SourceError(f"a value encrypted with {method} (only cryptography_decrypt_v1, "
                          f"what Heat 27 writes, is read; heat-manage update_params "
                          f"re-encrypts older values)")
    if not key:
        raise SourceError("the database holds encrypted values: give Heat's "
                          "auth_encryption_key (--auth-encryption-key)")
    key = (key * 2 if len(key) < 32 else key)[:32]
    try:
        clear = Fernet(base64.b64encode(key.encode())).decrypt(value.encode())
    except (InvalidToken, ValueError):
        raise SourceError("an encrypted value does not decrypt with the "
                          "auth_encryption_key given") from None
    return clear.decode()


def _json(text):
    if text is None or text == "":
        return None
    return json.loads(text) if isinstance(text, str) else text


class HeatDatabase:
    """The rows of one Heat database, read once (``load``) into plain dicts."""

    def __init__(self, conn, *, encryption_key=None):
        self.conn = conn
        self.key = encryption_key
        self.revision = None

    def _rows(self, sql, params=()):
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    def check_schema(self):
        """Raise SourceError unless this is Heat 27's schema."""
        try:
            tables = {r["name"].lower() for r in self._rows(
                "SELECT table_name AS name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
                if self._postgres() else
                "SELECT table_name AS name FROM information_schema.tables "
                "WHERE table_schema = DATABASE()")}
        finally:
            self.conn.rollback()
        missing = [t for t in HEAT_TABLES if t not in tables]
        if missing:
            raise SourceError(f"not a Heat database: no table {', '.join(missing)}")
        if "alembic_version" not in tables:
            raise SourceError("a Heat database older than Heat 2023.2 (sqlalchemy-migrate, "
                              "no alembic_version): run Heat 27's heat-manage db_sync first")
        found = [r["version_num"] for r in self._rows("SELECT version_num FROM alembic_version")]
        if len(found) != 1 or found[0] not in KNOWN_REVISIONS:
            raise SourceError(f"Heat database at schema revision {', '.join(found) or 'none'}, "
                              f"not one of Heat 27's ({', '.join(KNOWN_REVISIONS)}): a newer "
                              f"Heat's schema is not read")
        self.revision = found[0]

    def _postgres(self):
        return type(self.conn).__module__.startswith("psycopg")

    # Stacks ---------------------------------------------------------------------------

    def stacks(self):
        """Every stack not deleted (nor a convergence backup), oldest first."""
        return self._rows(
            "SELECT s.*, c.trustor_user_id FROM stack s "
            "LEFT JOIN user_creds c ON c.id = s.user_creds_id "
            "WHERE s.deleted_at IS NULL AND NOT (s.action = 'DELETE' AND s.status = 'COMPLETE') "
            "AND (s.backup IS NULL OR s.backup = %s) ORDER BY s.created_at, s.id", (False,))

    def holders(self, stack_ids):
        """``{stack id: (holding stack id, resource name)}``: the live resources whose
        physical id is one of ``stack_ids`` (Heat's OS::Heat::Stack makes its stack as a
        root stack of its own, held by the resource only through its physical id)."""
        if not stack_ids:
            return {}
        marks = ", ".join(["%s"] * len(stack_ids))
        return {r["nova_instance"]: (r["stack_id"], r["name"]) for r in self._rows(
            f"SELECT stack_id, name, nova_instance FROM resource WHERE nova_instance IN "
            f"({marks}) AND NOT (action = 'DELETE' AND status = 'COMPLETE')",
            tuple(stack_ids))}

    def raw_template(self, template_id):
        """``(template, files, environment)`` of a raw template, hidden values decrypted."""
        row = self._rows("SELECT * FROM raw_template WHERE id = %s", (template_id,))
        if not row:
            raise SourceError(f"raw template {template_id} is missing")
        row = row[0]
        files = _json(row.get("files")) or {}
        if row.get("files_id"):
            stored = self._rows("SELECT files FROM raw_template_files WHERE id = %s",
                                (row["files_id"],))
            files = _json(stored[0]["files"]) if stored else files
        env = dict(_json(row["environment"]) or {})
        params = dict(env.get("parameters") or {})
        for name in env.pop("encrypted_param_names", None) or []:
            value = params.get(name)
            if isinstance(value, list) and len(value) == 2:
                params[name] = decrypt(value[0], value[1], self.key)
        env["parameters"] = params
        return _json(row["template"]) or {}, files or {}, env

    def tags(self, stack_id):
        return [r["tag"] for r in self._rows(
            "SELECT tag FROM stack_tag WHERE stack_id = %s ORDER BY id", (stack_id,))]

    # Resources ------------------------------------------------------------------------

    def resources(self, stack_id):
        """The stack's resource rows with their properties, attributes and data."""
        rows = self._rows("SELECT * FROM resource WHERE stack_id = %s ORDER BY id", (stack_id,))
        data = {}
        if rows:
            marks = ", ".join(["%s"] * len(rows))
            for item in self._rows(f"SELECT * FROM resource_data WHERE resource_id IN ({marks})",
                                   tuple(r["id"] for r in rows)):
                value = item["value"]
                if item["redact"]:
                    value = decrypt(item["decrypt_method"], value, self.key)
                data.setdefault(item["resource_id"], {})[item["key"]] = value
        for row in rows:
            row["rsrc_metadata"] = _json(row["rsrc_metadata"]) or {}
            row["requires"] = _json(row["requires"]) or []
            row["resource_data"] = data.get(row["id"], {})
            row["properties"] = self._properties(row["rsrc_prop_data_id"]) \
                if row.get("rsrc_prop_data_id") else (_json(row.get("properties_data")) or {})
            row["attributes"] = self._properties(row["attr_data_id"]) \
                if row.get("attr_data_id") else {}
        return rows

    def _properties(self, data_id):
        found = self._rows("SELECT data, encrypted FROM resource_properties_data WHERE id = %s",
                           (data_id,))
        if not found:
            return {}
        data = _json(found[0]["data"]) or {}
        if found[0]["encrypted"]:
            data = {k: json.loads(decrypt(v[0], v[1], self.key)) for k, v in data.items()}
        return data

    def events(self, stack_id):
        """In the order Heat lists them (its time, then its id): a convergence engine
        writes an event's row after its time is taken, so ids alone are not that order.
        heatweb lists a stack's events in the order they were stored."""
        return self._rows("SELECT * FROM event WHERE stack_id = %s ORDER BY created_at, id",
                          (stack_id,))

    # Software configs and deployments ------------------------------------------------

    def deployments(self, ids):
        if not ids:
            return []
        marks = ", ".join(["%s"] * len(ids))
        rows = self._rows(f"SELECT * FROM software_deployment WHERE id IN ({marks})", tuple(ids))
        for row in rows:
            row["input_values"] = _json(row["input_values"]) or {}
            row["output_values"] = _json(row["output_values"]) or {}
        return rows

    def configs(self, ids):
        if not ids:
            return []
        marks = ", ".join(["%s"] * len(ids))
        rows = self._rows(f'SELECT * FROM software_config WHERE id IN ({marks})', tuple(ids))
        for row in rows:
            row["config"] = _json(row["config"]) or {}
        return rows

    def close(self):
        self.conn.close()
