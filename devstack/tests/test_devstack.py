import smtplib
from email.message import EmailMessage

import nats
import psycopg
import pytest

from konnectz_devstack import DevStackError, NatsServer, PostgresServer, free_port


def test_postgres_is_real_and_keeps_data_across_restart(tmp_path_factory, postgres_server):
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS keep (v text)")
        conn.execute("INSERT INTO keep VALUES ('survives')")
    postgres_server.stop()
    postgres_server.start()
    with psycopg.connect(postgres_server.dsn) as conn:
        rows = conn.execute("SELECT v FROM keep").fetchall()
    assert rows == [("survives",)]


def test_busy_port_gives_a_clear_message(postgres_server, tmp_path):
    other = PostgresServer(tmp_path / "pg", postgres_server.port)
    with pytest.raises(DevStackError, match=rf"Port {postgres_server.port} \(PostgreSQL\) is busy"):
        other.start()
    nats_clash = NatsServer(tmp_path / "nats", postgres_server.port)
    with pytest.raises(DevStackError, match="is busy"):
        nats_clash.start()


async def test_nats_has_jetstream(nats_server):
    nc = await nats.connect(nats_server.admin_url)
    js = nc.jetstream()
    await js.add_stream(name="DEVSTACK_T", subjects=["devstack.t"])
    ack = await js.publish("devstack.t", b"hello")
    assert ack.stream == "DEVSTACK_T"
    msg = await js.get_msg("DEVSTACK_T", ack.seq)
    assert msg.data == b"hello"
    await nc.close()


def test_smtp_sink_stores_real_smtp_mail(smtp_sink):
    import mailbox

    msg = EmailMessage()
    msg["From"] = "a@example.com"
    msg["To"] = "b@example.com"
    msg["Subject"] = "Hi"
    msg.set_content("body")
    with smtplib.SMTP("127.0.0.1", smtp_sink.port) as smtp:
        smtp.send_message(msg)
    box = mailbox.Maildir(str(smtp_sink.maildir), create=False)
    subjects = [m["Subject"] for m in box]
    assert "Hi" in subjects


def test_free_port_is_bindable():
    import socket

    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
