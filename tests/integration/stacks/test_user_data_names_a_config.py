"""A server's ``user_data`` naming a software config (``{get_resource: boot_config}``) is
that config's text, as Heat's server reads it for ``RAW`` and ``SOFTWARE_CONFIG``."""
import email

import pytest

from heatweb.models import Project
from softwareconfig import services
from stacks.resources.server_user_data import nova_user_data

SCRIPT = "#!/bin/sh\necho booted > /tmp/booted\n"


@pytest.fixture
def config():
    project = Project.objects.create(name="p-user-data")
    return services.config_create(project=project, name="boot", group="ungrouped",
                                  config=SCRIPT)


def _text_parts(user_data):
    return [p.get_payload() for p in email.message_from_string(user_data).get_payload()]


@pytest.mark.django_db
def test_raw_and_software_config_user_data_naming_a_config_get_its_text(config):
    named = {"user_data": str(config.pk)}
    assert nova_user_data({**named, "user_data_format": "RAW"},
                          project_id=config.project_id) == SCRIPT
    parts = _text_parts(nova_user_data({**named, "user_data_format": "SOFTWARE_CONFIG"},
                                       project_id=config.project_id))
    assert SCRIPT in parts and str(config.pk) not in "".join(parts)


@pytest.mark.django_db
def test_another_projects_config_an_unknown_id_and_heat_cfntools_stay_as_written(config):
    other = Project.objects.create(name="p-other")
    named = {"user_data": str(config.pk), "user_data_format": "RAW"}
    assert nova_user_data(named, project_id=other.pk) == str(config.pk)
    unknown = {"user_data": "5f0c2a8e-43a1-4bd1-9c55-0e0f1a2b3c4d", "user_data_format": "RAW"}
    assert nova_user_data(unknown, project_id=config.project_id) == unknown["user_data"]
    cfntools = _text_parts(nova_user_data({"user_data": str(config.pk)},
                                          project_id=config.project_id))
    assert str(config.pk) in cfntools and SCRIPT not in cfntools
