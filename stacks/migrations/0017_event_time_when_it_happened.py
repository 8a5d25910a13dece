"""An event's time is when it happened (set as it is built), not its insert's.

Only the model's default changes (a Python one, never in the schema): no database
work, so SQLite does not rebuild the events table for it."""
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('stacks', '0016_stack_consent'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.AlterField(
                model_name='event',
                name='created_at',
                field=models.DateTimeField(db_index=True, default=django.utils.timezone.now),
            ),
        ]),
    ]
