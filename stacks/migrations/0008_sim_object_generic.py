"""The simulated cloud's network objects become generic objects of any kind."""
import stacks.cloud.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('stacks', '0007_wait_condition_signals'),
    ]

    operations = [
        migrations.RenameModel(old_name='SimNetworkObject', new_name='SimObject'),
        migrations.AlterModelOptions(name='simobject',
                                     options={'verbose_name': 'simulated cloud object'}),
        migrations.AlterField(
            model_name='simobject', name='id',
            field=models.CharField(default=stacks.cloud.models.new_id, editable=False,
                                   max_length=255, primary_key=True, serialize=False)),
        migrations.AlterField(model_name='simobject', name='kind',
                              field=models.CharField(db_index=True, max_length=64)),
    ]
