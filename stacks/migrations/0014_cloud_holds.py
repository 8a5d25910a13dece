# One owner per cloud object (stacks.ownership).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('stacks', '0013_cloud_json_without_nul'),
    ]

    operations = [
        migrations.CreateModel(
            name='CloudHold',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('cloud', models.CharField(max_length=255)),
                ('kind', models.CharField(max_length=64)),
                ('physical_id', models.CharField(max_length=255)),
                ('since', models.DateTimeField(auto_now_add=True)),
                ('resource', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='holds', to='stacks.resource')),
                ('stack', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='stacks.stack')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('cloud', 'kind', 'physical_id'), name='one_holder_per_cloud_object')],
            },
        ),
    ]
