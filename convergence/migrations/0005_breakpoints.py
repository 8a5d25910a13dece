import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('convergence', '0004_waiter_stack_index'),
        ('stacks', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='Breakpoint',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('resource_id', models.BigIntegerField()),
                ('hook', models.CharField(max_length=16)),
                ('traversal_id', models.CharField(db_index=True, max_length=36)),
                ('entity', models.JSONField(default=list)),
                ('data', models.JSONField(blank=True, default=dict, null=True)),
                ('cleared', models.BooleanField(default=False)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('stack', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='stacks.stack')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('resource_id', 'hook'), name='uniq_breakpoint')],
            },
        ),
    ]
